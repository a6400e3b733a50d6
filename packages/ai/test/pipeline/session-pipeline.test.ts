import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import {
  isSessionMessageEvent,
  type Session,
  type SessionBackend,
  SessionBuilder,
  type SessionEvent,
} from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs, streamText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { type ContextPlugin, contextMiddleware, contextPipeline } from "../../src/index.js";
import { assertStablePrefix, comparePrefix } from "../../src/test.js";
import { answer, callTools, scriptedStreamModel, systemSeen } from "../helpers.js";
import { conversation } from "./helpers.js";

/**
 * Storage a process opens twice: `open()` again is a restart on the same data. In memory here; the same
 * scenario runs on better-sqlite3 through `sqliteBackend` in `@contextblocks/sqlite`'s tests
 * (test/node/session-pipeline.test.ts): `ai` does not depend on a backend.
 */
const backends: Array<[name: string, storage: () => { open: () => SessionBackend; close: () => void }]> = [
  [
    "the in-memory backend",
    () => {
      const first = inMemoryBackend();
      const { sessions, blocks, runState, registry } = first;
      let opened = 0;
      return {
        open: () => (opened++ === 0 ? first : inMemoryBackend({ sessions, blocks, runState, registry })),
        close: () => undefined,
      };
    },
  ],
];

/** The summariser's answer: it leaves the user's name out, so the name can only come from memory. */
const SUMMARY = "## Topic\nSmall talk.\n\n## Key Points\nThe user introduced themselves.";

/** Every message counts 100 tokens: compaction passes `compactAfter(750)` once a branch holds 8 messages. */
const hundredEach = ({ messages }: { messages: readonly unknown[] }) => messages.length * 100;

function chatSession(backend: SessionBackend, summaries: string[]): Session {
  return new SessionBuilder(backend)
    .forSession("chat-1")
    .withContext("soul", { provider: { get: async () => "You are a friendly assistant." } })
    .withContext("memory", { description: "Facts about the user", maxTokens: 400 })
    .withCachedPrompt()
    .onCompaction(
      createCompactFunction({
        summarize: async (prompt) => {
          summaries.push(prompt);
          return SUMMARY;
        },
        protectHead: 0,
        minTailMessages: 2,
        tailTokenBudget: 0,
        tokenCounter: (messages) => messages.length * 100,
      }),
    )
    .compactAfter(750, { tokenCounter: hundredEach })
    .build();
}

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

describe.each(backends)("contextPipeline({ model, session }) on %s", (_name, storage) => {
  it("stores each turn, compacts once past the threshold, and the refreshed prompt carries what the model wrote to memory", async () => {
    const { open, close } = storage();
    const backend = open();
    const summaries: string[] = [];
    const session = chatSession(backend, summaries);
    const events: SessionEvent[] = [];
    // The message change feed is checked in @contextblocks/sessions, usage reports in
    // test/providers/cache-usage.test.ts; here: blocks, prompt, compaction.
    session.subscribe((event) => {
      if (!isSessionMessageEvent(event) && event.type !== "usage-reported") events.push(event);
    });
    const model = scripted([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "The user is Ada." } }),
      answer("Nice to meet you!"),
      answer("Turn 2."),
      answer("Turn 3."),
      answer("Turn 4."),
      answer("Turn 5."),
      answer("Turn 6."),
    ]);
    const pipeline = contextPipeline({ model, session, plugins: [callCounter()] });
    const turn = (text: string) =>
      generateText({ model: pipeline.model, tools: pipeline.tools, prompt: text, stopWhen: stepCountIs(4) });

    // Turn 1: the model writes memory with set_context; the frozen prompt stays as it was (cache kept).
    const first = await turn("Hi, I'm Ada.");
    expect(first.text).toBe("Nice to meet you!");
    expect(events).toEqual([
      expect.objectContaining({ type: "prompt-frozen", origin: "rendered" }),
      {
        type: "block-written",
        label: "memory",
        action: "set",
        source: { kind: "tool", name: "set_context", toolCallId: expect.any(String) },
      },
    ]);
    const calls = model.doGenerateCalls;
    const turnOnePrompt = systemSeen(calls[0]);
    expect(turnOnePrompt).toContain("You are a friendly assistant.");
    expect(turnOnePrompt).not.toContain("Ada");
    expect(systemSeen(calls[1])).toBe(turnOnePrompt);
    expect(await session.store.getPathLength()).toBe(3); // user, assistant (tool call and its result), answer

    // Turns 2-4 pass only their new message; the session supplies the rest. No compaction yet.
    await turn("What's the weather?");
    await turn("And tomorrow?");
    expect(conversation(calls[3])).toEqual([
      "user: Hi, I'm Ada.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "assistant: Nice to meet you!",
      "user: What's the weather?",
      "assistant: Turn 2.",
      "user: And tomorrow?",
    ]);
    // The cached prefix (system prompt and tools) is byte-identical from call to call between compactions.
    await assertStablePrefix(calls[0] as LanguageModelV3CallOptions, calls[3] as LanguageModelV3CallOptions, {
      context: session.context,
    });
    expect((await comparePrefix(calls[2]!, calls[3]!)).messages).toEqual({
      sharedPrefix: 5,
      previousCount: 5,
    });
    expect(events.map((event) => event.type)).toEqual(["prompt-frozen", "block-written"]);

    // Turn 4 makes 9 messages (900 > 750): stored as one turn, then one compaction, then the prompt refresh.
    await turn("Thanks!");
    expect(events.map((event) => event.type)).toEqual([
      "prompt-frozen",
      "block-written",
      "compacted",
      "prompt-refreshed",
    ]);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toContain("Hi, I'm Ada.");
    const compacted = events[2];
    expect(compacted).toMatchObject({ type: "compacted", summary: SUMMARY });
    const refreshed = events[3];
    expect(refreshed?.type === "prompt-refreshed" && refreshed.prompt).toContain("The user is Ada.");
    expect(await session.getHistory()).toHaveLength(3); // the summary, then turn 4 (the protected tail)

    // Turn 5: the system prompt carries the memory, although turn 1 was summarised away.
    await turn("Do you remember me?");
    const turnFive = calls[5] as LanguageModelV3CallOptions;
    expect(systemSeen(turnFive)).toContain("The user is Ada.");
    expect(conversation(turnFive)).toEqual([
      `assistant: ${SUMMARY}`,
      "user: Thanks!",
      "assistant: Turn 4.",
      "user: Do you remember me?",
    ]);
    expect(JSON.stringify(turnFive.prompt)).not.toContain("Hi, I'm Ada.");
    const busted = await comparePrefix(calls[4]!, turnFive, { context: session.context });
    expect(busted.system.changedBlocks).toEqual(["memory"]);
    expect(busted.tools.identical).toBe(true);

    // The plugin beside the session ran on every call; its state lives in the session's run-state store.
    expect(systemSeen(turnFive)).not.toContain("Answer in one sentence.");
    expect(turnFive.prompt.filter((message) => message.role === "system").map((m) => m.content)).toEqual([
      systemSeen(turnFive),
      "Answer in one sentence.",
    ]);
    expect(await backend.runState.load("chat-1")).toEqual({ counter: { calls: 6 } });

    // A restart on the same storage: the stored prompt (with the memory) and the compacted history come back.
    const restarted = chatSession(open(), summaries);
    const again = contextPipeline({ model, session: restarted, plugins: [callCounter()] });
    await generateText({ model: again.model, tools: again.tools, prompt: "Still there?" });
    const turnSix = calls[6] as LanguageModelV3CallOptions;
    await assertStablePrefix(turnFive, turnSix, { context: restarted.context });
    expect((await comparePrefix(turnFive, turnSix)).messages).toEqual({ sharedPrefix: 4, previousCount: 4 });
    expect(await open().runState.load("chat-1")).toEqual({ counter: { calls: 7 } });
    close();
  });

  it("streams a turn through streamText and stores it like generateText", async () => {
    const { open, close } = storage();
    const session = chatSession(open(), []);
    const events: SessionEvent[] = [];
    // The message change feed is checked in @contextblocks/sessions, usage reports in
    // test/providers/cache-usage.test.ts; here: blocks, prompt, compaction.
    session.subscribe((event) => {
      if (!isSessionMessageEvent(event) && event.type !== "usage-reported") events.push(event);
    });
    const model = scriptedStreamModel([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Likes tea." } }),
      answer("Noted."),
      answer("Tea it is."),
    ]);
    const pipeline = contextPipeline({ model, session });

    const result = streamText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "I like tea.",
      stopWhen: stepCountIs(4),
    });
    expect(await result.text).toBe("Noted.");
    expect(events).toEqual([
      expect.objectContaining({ type: "prompt-frozen", origin: "rendered" }),
      {
        type: "block-written",
        label: "memory",
        action: "set",
        source: { kind: "tool", name: "set_context", toolCallId: expect.any(String) },
      },
    ]);
    expect((await session.getHistory()).map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "assistant",
    ]);

    const next = streamText({ model: pipeline.model, tools: pipeline.tools, prompt: "What do I drink?" });
    expect(await next.text).toBe("Tea it is.");
    const calls = model.doStreamCalls;
    expect(conversation(calls[2])).toEqual([
      "user: I like tea.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "assistant: Noted.",
      "user: What do I drink?",
    ]);
    await assertStablePrefix(calls[0]!, calls[2]!);
    close();
  });
});

describe("contextMiddleware({ session }) configuration", () => {
  it("takes the session's id and run state, and refuses a second source of blocks or another id", async () => {
    const backend = inMemoryBackend();
    const session = new SessionBuilder(backend).forSession("s-1").withContext("memory").build();
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
    expect(await session2.store.getPathLength()).toBe(0);
    expect(await session.store.getPathLength()).toBe(2);
  });

  it('keys the default session\'s run state (session id "") as "default", the id SQL run-state stores accept', async () => {
    const backend = inMemoryBackend();
    const session = new SessionBuilder(backend).withContext("memory").build();
    expect(session.id).toBe("");
    const pipeline = contextPipeline({
      model: scripted([answer("One.")]),
      session,
      plugins: [callCounter()],
    });
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello" });
    expect(await backend.runState.load("default")).toEqual({ counter: { calls: 1 } });
    expect(await backend.runState.load("")).toBeNull();
    expect(await session.store.getPathLength()).toBe(2);
  });
});

describe("a call that continues a named message (providerOptions.contextblocks.parentId)", () => {
  it("loads that branch and stores the turn beside the old one; the next turns continue the new branch", async () => {
    const session = new SessionBuilder(inMemoryBackend()).forSession("branchy").withContext("memory").build();
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
      .withContext("memory")
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
