import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { type ContextPlugin, contextPipeline, SessionHistoryPlugin } from "@contextblocks/ai";
import { comparePrefix } from "@contextblocks/ai/test";
import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { SessionBuilder } from "@contextblocks/sessions";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { SqliteRunStateStore, sqliteBackend } from "../../src/index.js";
import { inObject } from "./in-object.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function step(content: LanguageModelV3GenerateResult["content"], unified: "stop" | "tool-calls") {
  return { content, finishReason: { unified, raw: unified }, usage, warnings: [] };
}

/** Counts the turns of a session in its run state. */
const counter: ContextPlugin = {
  sourceId: "counter",
  afterCall(run) {
    run.state.turns = Number(run.state.turns ?? 0) + 1;
  },
};

describe("SessionHistoryPlugin on Durable Object storage", () => {
  it("stores a turn with a tool call in ctx.storage and replays it after the object is rebuilt", async () => {
    const store = new InMemoryStore();
    const context = new ContextBlocks(
      [
        {
          label: "memory",
          description: "Facts",
          maxTokens: 100,
          provider: new InMemoryContextProvider({ store }),
        },
      ],
      new InMemoryContextProvider({ store, label: "_system_prompt" }),
    );
    const steps = [
      step(
        [
          {
            type: "tool-call",
            toolCallId: "call-1",
            toolName: "set_context",
            input: JSON.stringify({ label: "memory", content: "Name: Ada." }),
          },
        ],
        "tool-calls",
      ),
      step([{ type: "text", text: "Noted, Ada." }], "stop"),
      step([{ type: "text", text: "You are Ada." }], "stop"),
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const next = steps.shift();
        if (!next) throw new Error("the scripted model ran out of steps");
        return next;
      },
    });
    // Each inObject call builds everything anew from ctx.storage, as a woken Durable Object does.
    const turn = (prompt: string, stopAfter: number) =>
      inObject("history", async (state) => {
        const session = new SessionBuilder(sqliteBackend(state.storage)).forSession("chat").build();
        const pipeline = contextPipeline({
          model,
          context,
          plugins: [new SessionHistoryPlugin("history", { session }), counter],
          stateStore: new SqliteRunStateStore(state.storage),
        });
        const result = await generateText({
          model: pipeline.model,
          tools: pipeline.tools,
          prompt,
          stopWhen: stepCountIs(stopAfter),
        });
        return result.text;
      });

    expect(await turn("I'm Ada.", 3)).toBe("Noted, Ada.");
    expect(await turn("Who am I?", 1)).toBe("You are Ada.");

    const [, lastStep, nextTurn] = model.doGenerateCalls;
    expect((await comparePrefix(lastStep!, nextTurn!)).messages).toEqual({
      sharedPrefix: 3,
      previousCount: 3,
    });
    await inObject("history", async (state) => {
      const history = await new SessionBuilder(sqliteBackend(state.storage))
        .forSession("chat")
        .build()
        .getHistory();
      expect(
        history.map((message) => `${message.role}: ${message.parts.map((part) => part.type).join(",")}`),
      ).toEqual([
        "user: text",
        "assistant: tool-set_context",
        "assistant: text",
        "user: text",
        "assistant: text",
      ]);
      expect(history[1]?.parts[0]).toMatchObject({ state: "output-available", toolCallId: "call-1" });
      // Two model calls in the first turn and one in the second: three runs counted.
      expect(await new SqliteRunStateStore(state.storage).load("default")).toEqual({
        counter: { turns: 3 },
      });
    });
  });
});
