import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { type ContextPlugin, contextPipeline } from "@contextblocks/ai";
import { assertStablePrefix, comparePrefix } from "@contextblocks/ai/test";
import {
  isSessionMessageEvent,
  type Session,
  type SessionBackend,
  SessionBuilder,
  type SessionEvent,
} from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import {
  answer,
  callTool,
  conversation,
  scriptedModel,
  scriptedStreamModel,
} from "@contextblocks/test-kit/model";
import { generateText, stepCountIs, streamText } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backends, type OpenBackend } from "../src/backends.js";

/*
 * `contextPipeline({ model, session })` of `@contextblocks/ai` on each backend: the session's blocks, frozen
 * prompt, history, run state and compaction in one storage, and a restart on that storage.
 */

/** The first system message a call carried: the frozen prompt. */
function systemOf(call: LanguageModelV3CallOptions | undefined): string {
  const first = call?.prompt[0];
  if (first?.role !== "system") throw new Error("the call has no system message");
  return first.content;
}

/** The summariser's answer: it leaves the user's name out, so the name can only come from memory. */
const SUMMARY = "## Topic\nSmall talk.\n\n## Key Points\nThe user introduced themselves.";

/** Every message counts 100 tokens: compaction passes `compactAfter(750)` once a branch holds 8 messages. */
const hundredEach = ({ messages }: { messages: readonly unknown[] }) => messages.length * 100;

function chatSession(backend: SessionBackend, summaries: string[]): Session {
  return (
    new SessionBuilder(backend)
      .forSession("chat-1")
      .withContext("soul", { provider: { get: async () => "You are a friendly assistant." } })
      // Waits for a refresh, so the transcripts below are exact; the default (a reminder) is tested last.
      .withContext("memory", { description: "Facts about the user", maxTokens: 400, whenChanged: "wait" })
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
      .build()
  );
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

describe.each(backends)("contextPipeline({ model, session }) on $name", (underTest) => {
  let opened: OpenBackend;
  beforeEach(async () => {
    opened = await underTest.open();
  });
  afterEach(() => opened.close());

  it("stores each turn, compacts once past the threshold, and the refreshed prompt carries what the model wrote to memory", async () => {
    const backend = opened.backend;
    const summaries: string[] = [];
    const session = chatSession(backend, summaries);
    const events: SessionEvent[] = [];
    // The message change feed is checked in @contextblocks/sessions, usage reports in
    // test/providers/cache-usage.test.ts; here: blocks, prompt, compaction.
    session.subscribe((event) => {
      if (!isSessionMessageEvent(event) && event.type !== "usage-reported") events.push(event);
    });
    const model = scriptedModel([
      callTool("call-1", "set_context", { label: "memory", content: "The user is Ada." }),
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
    const turnOnePrompt = systemOf(calls[0]);
    expect(turnOnePrompt).toContain("You are a friendly assistant.");
    expect(turnOnePrompt).not.toContain("Ada");
    expect(systemOf(calls[1])).toBe(turnOnePrompt);
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
    expect(systemOf(turnFive)).toContain("The user is Ada.");
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
    expect(systemOf(turnFive)).not.toContain("Answer in one sentence.");
    expect(turnFive.prompt.filter((message) => message.role === "system").map((m) => m.content)).toEqual([
      systemOf(turnFive),
      "Answer in one sentence.",
    ]);
    expect(await backend.runState.load("chat-1")).toEqual({ counter: { calls: 6 } });

    // A restart on the same storage: the stored prompt (with the memory) and the compacted history come back.
    const restartedBackend = await opened.restart();
    const restarted = chatSession(restartedBackend, summaries);
    const again = contextPipeline({ model, session: restarted, plugins: [callCounter()] });
    await generateText({ model: again.model, tools: again.tools, prompt: "Still there?" });
    const turnSix = calls[6] as LanguageModelV3CallOptions;
    await assertStablePrefix(turnFive, turnSix, { context: restarted.context });
    expect((await comparePrefix(turnFive, turnSix)).messages).toEqual({ sharedPrefix: 4, previousCount: 4 });
    expect(await (await opened.restart()).runState.load("chat-1")).toEqual({ counter: { calls: 7 } });
  });

  it("with default settings, a fact written with set_context reaches the next turn as a reminder after the cached prefix", async () => {
    const fact = "The user deploys on Cloudflare Workers.";
    const model = scriptedModel([
      callTool("call-1", "set_context", { label: "memory", content: fact }),
      answer("Noted."),
      answer("On Workers."),
      answer("Still Workers."),
    ]);
    // The documented wiring, a new Session per turn (as a Worker builds one per request).
    const documented = () =>
      new SessionBuilder(opened.backend)
        .forSession("chat-1")
        .withContext("soul", { provider: { get: async () => "You are a helpful assistant." } })
        .withContext("memory", { description: "Facts learned about the user", maxTokens: 1100 })
        .withCachedPrompt()
        .build();
    const turn = async (prompt: string) => {
      const pipeline = contextPipeline({ model, session: documented() });
      await generateText({ model: pipeline.model, tools: pipeline.tools, prompt, stopWhen: stepCountIs(3) });
    };
    await turn("I deploy on Workers.");
    await turn("Where do I deploy?");
    const [first, , second] = model.doGenerateCalls;
    // The prefix cache stays warm: the same system prompt, byte for byte; the fact travels after it.
    expect(systemOf(second)).toBe(systemOf(first));
    expect(systemOf(first)).not.toContain(fact);
    const newest = JSON.stringify(second?.prompt.at(-1));
    expect(newest).toContain("Where do I deploy?");
    expect(newest).toContain(fact);
    // A refresh (the one deliberate cache bust) moves it into the prompt; the reminder stops.
    await documented().context.refreshSystemPrompt();
    await turn("And now?");
    const third = model.doGenerateCalls[3];
    expect(systemOf(third)).toContain(fact);
    expect(JSON.stringify(third?.prompt.at(-1))).not.toContain(fact);
  });

  it("streams a turn through streamText and stores it like generateText", async () => {
    const session = chatSession(opened.backend, []);
    const events: SessionEvent[] = [];
    // The message change feed is checked in @contextblocks/sessions, usage reports in
    // test/providers/cache-usage.test.ts; here: blocks, prompt, compaction.
    session.subscribe((event) => {
      if (!isSessionMessageEvent(event) && event.type !== "usage-reported") events.push(event);
    });
    const model = scriptedStreamModel([
      callTool("call-1", "set_context", { label: "memory", content: "Likes tea." }),
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
    const stored = await chatSession(await opened.restart(), []).getHistory();
    expect(stored.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "assistant",
      "user",
      "assistant",
    ]);
  });
});
