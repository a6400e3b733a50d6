import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import {
  isSessionMessageEvent,
  type Session,
  SessionBuilder,
  type SessionEvent,
} from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { type ContextPlugin, contextMiddleware, contextPipeline } from "../../src/index.js";
import { answer, callTools, systemSeen } from "../helpers.js";
import { conversation } from "./helpers.js";

/**
 * These tests follow the transcript and events of the pipeline exactly, so memory waits for a refresh
 * (`whenChanged: "wait"`): the default reminder is tested in `sessions/memory-reminder.test.ts` and, on every
 * backend, in tests/backends.
 */
const WAIT = { whenChanged: "wait" } as const;

/** Every message counts 100 tokens. (The whole session scenario runs on every backend in tests/backends.) */
const hundredEach = ({ messages }: { messages: readonly unknown[] }) => messages.length * 100;

/** A model that plays `steps` in order through `doGenerate` and records every call it received. */
function scripted(steps: LanguageModelV3GenerateResult[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const step = steps.shift();
      if (!step) throw new Error("the scripted model ran out of steps");
      return step;
    },
  });
}

/** A plugin beside the session's: counts calls in its run state and adds one instruction. */
function callCounter(): ContextPlugin {
  return {
    sourceId: "counter",
    beforeCall(run) {
      run.extendInstructions("counter", "Answer in one sentence.");
    },
    afterCall(run) {
      run.state.calls = Number(run.state.calls ?? 0) + 1;
    },
  };
}

describe("contextMiddleware({ session }) configuration", () => {
  it("takes the session's id and run state, and refuses a second source of blocks or another id", async () => {
    const backend = inMemoryBackend();
    const session = new SessionBuilder(backend).forSession("s-1").withContext("memory", WAIT).build();
    const session2 = new SessionBuilder(backend).forSession("s-2").build();
    expect(() => contextMiddleware({ session, context: session2.context })).toThrow(
      /either session or context/,
    );
    expect(() => contextMiddleware({ session, sessionId: "other" })).toThrow(
      /sessionId "other" is not the session's id "s-1"/,
    );
    expect(() => contextMiddleware({ session: {} as Session })).toThrow(/expected a Session/);

    const model = scripted([answer("One."), answer("Two.")]);
    const pipeline = contextPipeline({ model, session, plugins: [callCounter()] });
    expect(Object.keys(pipeline.tools)).toEqual(["set_context", "edit_context"]);
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello" });
    expect(await backend.runState.load("s-1")).toEqual({ counter: { calls: 1 } });

    // A call that names another session fails instead of writing one session's messages into another.
    await expect(
      generateText({
        model: pipeline.model,
        tools: pipeline.tools,
        prompt: "Hello",
        providerOptions: { contextblocks: { sessionId: "s-2" } },
      }),
    ).rejects.toThrow(/serves session "s-1"; a call named "s-2"/);
    // A made-up id of 1 MB is quoted clipped: the error does not carry its megabyte.
    const refusal = await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "Hello",
      providerOptions: { contextblocks: { sessionId: "s".repeat(1_000_000) } },
    }).catch((error: unknown) => error);
    expect(String(refusal)).toMatch(/a call named "s{80}…" \(build one pipeline per session\)$/);
    expect(String(refusal).length).toBeLessThan(400);
    expect(await session2.store.getPathLength()).toBe(0);
    expect(await session.store.getPathLength()).toBe(2);
  });

  it('keys the default session\'s run state (session id "") as "default", the id SQL run-state stores accept', async () => {
    const backend = inMemoryBackend();
    const session = new SessionBuilder(backend).withContext("memory", WAIT).build();
    expect(session.id).toBe("");
    const pipeline = contextPipeline({
      model: scripted([answer("One.")]),
      session,
      plugins: [callCounter()],
    });
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello" });
    expect(await backend.runState.load("default")).toEqual({ counter: { calls: 1 } });
    // Every run-state store, the memory one included, refuses the empty id the default session would give.
    await expect(backend.runState.load("")).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(await session.store.getPathLength()).toBe(2);
  });
});

describe("a call that continues a named message (providerOptions.contextblocks.parentId)", () => {
  it("loads that branch and stores the turn beside the old one; the next turns continue the new branch", async () => {
    const session = new SessionBuilder(inMemoryBackend())
      .forSession("branchy")
      .withContext("memory", WAIT)
      .build();
    const model = scripted([
      answer("A1"),
      answer("A2"),
      callTools(2, { toolName: "set_context", input: { label: "memory", content: "Edited." } }),
      answer("A2 edited"),
      answer("A3"),
      answer("Root"),
    ]);
    const pipeline = contextPipeline({ model, session });
    const turn = (text: string, parentId?: string | null) =>
      generateText({
        model: pipeline.model,
        tools: pipeline.tools,
        prompt: text,
        stopWhen: stepCountIs(4),
        ...(parentId === undefined ? {} : { providerOptions: { contextblocks: { parentId } } }),
      });
    await turn("Q1");
    await turn("Q2");
    const [q1, a1, q2] = await session.getHistory();
    expect([q1?.role, a1?.role, q2?.role]).toEqual(["user", "assistant", "user"]);

    // Edit Q2: the new text continues A1 (a tool loop of two model calls), beside the old Q2.
    await turn("Q2 edited", a1?.id);
    const calls = model.doGenerateCalls;
    expect(conversation(calls[2])).toEqual(["user: Q1", "assistant: A1", "user: Q2 edited"]);
    expect(conversation(calls[3])).toEqual([
      "user: Q1",
      "assistant: A1",
      "user: Q2 edited",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
    ]);
    expect((await session.store.getBranches(a1?.id ?? "")).map((message) => message.parts[0]?.text)).toEqual([
      "Q2",
      "Q2 edited",
    ]);
    const branch = (await session.getHistory()).map((message) => message.role);
    expect(branch).toEqual(["user", "assistant", "user", "assistant", "assistant"]);

    await turn("Q3");
    expect(conversation(calls[4])).toEqual([
      "user: Q1",
      "assistant: A1",
      "user: Q2 edited",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "assistant: A2 edited",
      "user: Q3",
    ]);
    expect(await session.store.getPathLength()).toBe(7);

    // A new root: nothing before the message, and the turn is a tree of its own.
    await turn("Fresh start", null);
    expect(conversation(calls[5])).toEqual(["user: Fresh start"]);
    expect((await session.getHistory()).map((message) => message.parts[0]?.text)).toEqual([
      "Fresh start",
      "Root",
    ]);
    await expect(turn("Bad", "")).rejects.toThrow(/parentId must be a message id/);
  });
});

describe("compaction and the tool loop", () => {
  it("waits for the end of the turn: no compaction (and no prompt refresh) between the calls of a tool loop", async () => {
    const summaries: string[] = [];
    const session = new SessionBuilder(inMemoryBackend())
      .forSession("loop")
      .withContext("memory", WAIT)
      .onCompaction(
        createCompactFunction({
          summarize: async (prompt) => {
            summaries.push(prompt);
            return "Summary.";
          },
          protectHead: 0,
          minTailMessages: 2,
          tailTokenBudget: 0,
          tokenCounter: (messages) => messages.length * 100,
        }),
      )
      .compactAfter(150, { tokenCounter: hundredEach })
      .build(); // past it once two messages are stored
    const events: SessionEvent[] = [];
    // The message change feed is checked in @contextblocks/sessions, usage reports in
    // test/providers/cache-usage.test.ts; here: blocks, prompt, compaction.
    session.subscribe((event) => {
      if (!isSessionMessageEvent(event) && event.type !== "usage-reported") events.push(event);
    });
    const model = scripted([
      answer("Hi."),
      callTools(1, { toolName: "set_context", input: { label: "memory", content: "Ada." } }),
      answer("Done."),
    ]);
    const pipeline = contextPipeline({ model, session });
    const turn = (text: string) =>
      generateText({ model: pipeline.model, tools: pipeline.tools, prompt: text, stopWhen: stepCountIs(3) });
    await turn("Hello"); // two messages: past the threshold, too few to compact
    await turn("I'm Ada.");

    // The tool call's messages made four (a compaction was due), but the call waited for its result:
    // the second call of the loop got the same system prompt, and the compaction came after the answer.
    const [, first, second] = model.doGenerateCalls;
    expect(systemSeen(second)).toBe(systemSeen(first));
    expect(systemSeen(first)).not.toContain("Ada.");
    expect(events.map((event) => event.type)).toEqual([
      "prompt-frozen",
      "block-written",
      "compacted",
      "prompt-refreshed",
    ]);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toContain("I'm Ada.");
    const history = (await session.getHistory()).map(
      (message) => `${message.role}: ${message.parts[0]?.type}`,
    );
    expect(history).toEqual(["assistant: text", "assistant: tool-set_context", "assistant: text"]);
    expect(await session.context.freezeSystemPrompt()).toContain("Ada.");
  });
});
