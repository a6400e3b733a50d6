import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { type ContextPlugin, contextPipeline } from "@contextblocks/ai";
import { assertStablePrefix, comparePrefix } from "@contextblocks/ai/test";
import {
  isSessionMessageEvent,
  type Session,
  SessionBuilder,
  type SessionEvent,
} from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { answer, callTool, scriptedModel } from "@contextblocks/test-kit/model";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { generateText, stepCountIs, streamText } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";

/*
 * `contextPipeline({ model, session })` of `@contextblocks/ai` on this backend: the session's blocks, frozen
 * prompt, history, run state and compaction all in one better-sqlite3 file, and a cold start on that file.
 * The same scenario runs on the in-memory backend in `@contextblocks/ai`'s tests.
 */

const SUMMARY = "## Topic\nSmall talk.\n\n## Key Points\nThe user introduced themselves.";

let file: TemporaryDatabase;
beforeEach(() => {
  file = openTemporaryDatabase();
});
afterEach(() => file.remove());

/** Every message counts 100 tokens: `compactAfter(750)` compacts once a branch holds 8 messages. */
function chatSession(database: Database.Database, summaries: string[]): Session {
  return new SessionBuilder(sqliteBackend(database))
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
    .compactAfter(750, { tokenCounter: ({ messages }) => messages.length * 100 })
    .build();
}

function systemOf(call: LanguageModelV3CallOptions | undefined): string {
  const first = call?.prompt[0];
  if (first?.role !== "system") throw new Error("the call has no system message");
  return first.content;
}

/** Each non-system message as `role: text`, tool parts as `[type toolName]`. */
function conversation(call: LanguageModelV3CallOptions | undefined): string[] {
  return (call?.prompt ?? []).flatMap((message) => {
    if (message.role === "system") return [];
    const parts = message.content.map((part) =>
      part.type === "text"
        ? part.text
        : part.type === "tool-call" || part.type === "tool-result"
          ? `[${part.type} ${part.toolName}]`
          : `[${part.type}]`,
    );
    return [`${message.role}: ${parts.join(" | ")}`];
  });
}

const counter: ContextPlugin = {
  sourceId: "counter",
  afterCall(run) {
    run.state.calls = Number(run.state.calls ?? 0) + 1;
  },
};

describe("contextPipeline({ model, session }) on sqliteBackend(better-sqlite3)", () => {
  it("compacts once past the threshold; the refreshed prompt carries the memory written in turn 1, also after a cold start", async () => {
    const summaries: string[] = [];
    const session = chatSession(file.database, summaries);
    const events: SessionEvent[] = [];
    // The message change feed is checked in @contextblocks/sessions, usage reports in @contextblocks/ai;
    // here: blocks, prompt, compaction.
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
    const pipeline = contextPipeline({ model, session, plugins: [counter] });
    const turn = (text: string) =>
      generateText({ model: pipeline.model, tools: pipeline.tools, prompt: text, stopWhen: stepCountIs(4) });
    const calls = model.doGenerateCalls;

    await turn("Hi, I'm Ada.");
    expect(events).toEqual([
      expect.objectContaining({ type: "prompt-frozen", origin: "rendered" }),
      {
        type: "block-written",
        label: "memory",
        action: "set",
        source: expect.objectContaining({ kind: "tool", name: "set_context" }),
      },
    ]);
    expect(systemOf(calls[0])).not.toContain("Ada");
    expect(systemOf(calls[1])).toBe(systemOf(calls[0]));
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
    await assertStablePrefix(calls[0]!, calls[3]!, { context: session.context });

    await turn("Thanks!"); // 9 messages: one compaction after the turn, then the refresh
    expect(events.map((event) => event.type)).toEqual([
      "prompt-frozen",
      "block-written",
      "compacted",
      "prompt-refreshed",
    ]);
    expect(summaries).toHaveLength(1);

    await turn("Do you remember me?");
    const turnFive = calls[5]!;
    expect(systemOf(turnFive)).toContain("The user is Ada.");
    expect(conversation(turnFive)).toEqual([
      `assistant: ${SUMMARY}`,
      "user: Thanks!",
      "assistant: Turn 4.",
      "user: Do you remember me?",
    ]);
    expect(
      (await comparePrefix(calls[4]!, turnFive, { context: session.context })).system.changedBlocks,
    ).toEqual(["memory"]);
    expect(await sqliteBackend(file.database).runState.load("chat-1")).toEqual({ counter: { calls: 6 } });

    // A cold start: a new connection on the file, a new session and pipeline.
    const reopened = chatSession(file.reopen(), summaries);
    const again = contextPipeline({ model, session: reopened, plugins: [counter] });
    await generateText({ model: again.model, tools: again.tools, prompt: "Still there?" });
    const turnSix = calls[6]!;
    await assertStablePrefix(turnFive, turnSix, { context: reopened.context });
    expect((await comparePrefix(turnFive, turnSix)).messages).toEqual({ sharedPrefix: 4, previousCount: 4 });
    expect(await sqliteBackend(file.database).runState.load("chat-1")).toEqual({ counter: { calls: 7 } });
  });

  it("streams a turn through streamText and stores it", async () => {
    const session = chatSession(file.database, []);
    const steps = [
      callTool("call-1", "set_context", { label: "memory", content: "Likes tea." }),
      answer("Noted."),
      answer("Tea it is."),
    ];
    const model = new MockLanguageModelV3({
      doStream: async () => {
        const step = steps.shift();
        if (!step) throw new Error("the scripted model ran out of steps");
        const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
        for (const content of step.content) {
          if (content.type === "text") {
            parts.push(
              { type: "text-start", id: "t" },
              { type: "text-delta", id: "t", delta: content.text },
              { type: "text-end", id: "t" },
            );
          } else if (content.type === "tool-call") parts.push(content);
        }
        parts.push({ type: "finish", finishReason: step.finishReason, usage: step.usage });
        return { stream: convertArrayToReadableStream(parts) };
      },
    });
    const pipeline = contextPipeline({ model, session });
    const first = streamText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "I like tea.",
      stopWhen: stepCountIs(4),
    });
    expect(await first.text).toBe("Noted.");
    const second = streamText({ model: pipeline.model, tools: pipeline.tools, prompt: "What do I drink?" });
    expect(await second.text).toBe("Tea it is.");
    expect(conversation(model.doStreamCalls[2])).toEqual([
      "user: I like tea.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "assistant: Noted.",
      "user: What do I drink?",
    ]);
    await assertStablePrefix(model.doStreamCalls[0]!, model.doStreamCalls[2]!);
    const stored = await new SessionBuilder(sqliteBackend(file.reopen()))
      .forSession("chat-1")
      .build()
      .getHistory();
    expect(stored.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "assistant",
      "user",
      "assistant",
    ]);
  });
});
