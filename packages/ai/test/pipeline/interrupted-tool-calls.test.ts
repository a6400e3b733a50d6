import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { type Session, SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";
import { interruptedToolResult } from "../../src/pipeline/interrupted-tool-calls.js";
import { answer } from "../helpers.js";

/** The tool calls of a prompt that no result follows before a user or system message or the end. */
function callsWithoutResult(prompt: LanguageModelV3Prompt): string[] {
  const pending = new Set<string>();
  const missing: string[] = [];
  for (const message of prompt) {
    if (message.role === "assistant") {
      for (const part of message.content) {
        if (part.type === "tool-call" && part.providerExecuted !== true) pending.add(part.toolCallId);
      }
    } else if (message.role === "tool") {
      for (const part of message.content) if (part.type === "tool-result") pending.delete(part.toolCallId);
    } else {
      missing.push(...pending);
      pending.clear();
    }
  }
  return [...missing, ...pending];
}

/** A session whose last turn was cut off: the model's tool call was stored, its result never was. */
async function sessionWithInterruptedTurn(): Promise<Session> {
  const session = new SessionBuilder(inMemoryBackend()).forSession("tides").build();
  await session.appendMessage({
    id: "u1",
    role: "user",
    parts: [{ type: "text", text: "When is high tide in Brest?" }],
  });
  await session.appendMessage({
    id: "a1",
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "tool-lookup", toolCallId: "call-1", state: "input-available", input: { place: "Brest" } },
    ],
  });
  return session;
}

function recordingModel(calls: LanguageModelV3CallOptions[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      calls.push(options);
      return answer("High tide is at 14:02.");
    },
  });
}

describe("a tool call whose turn was cut off before its result was stored", () => {
  it("replays with an error result, so the next turn's prompt is one providers accept", async () => {
    const session = await sessionWithInterruptedTurn();
    const calls: LanguageModelV3CallOptions[] = [];
    const pipeline = contextPipeline({ model: recordingModel(calls), session });

    const result = await generateText({ model: pipeline.model, prompt: "And tomorrow?" });

    expect(result.text).toBe("High tide is at 14:02.");
    const prompt = calls[0]?.prompt ?? [];
    expect(callsWithoutResult(prompt)).toEqual([]);
    const results = prompt.flatMap((message) => (message.role === "tool" ? message.content : []));
    expect(results).toEqual([
      {
        type: "tool-result",
        toolCallId: "call-1",
        toolName: "lookup",
        output: { type: "error-text", value: interruptedToolResult },
      },
    ]);
    // The result sits between the call and the new question, where the providers look for it.
    const roles = prompt.map((message) => message.role);
    expect(roles.slice(-3)).toEqual(["assistant", "tool", "user"]);
    // Nothing is written into the stored transcript: the repair is in the prompt only.
    const stored = await session.getHistory();
    expect(stored.find((message) => message.id === "a1")?.parts.at(-1)).toMatchObject({
      state: "input-available",
    });
  });

  it("keeps a result the caller sends for the call (a client-side tool answered late)", async () => {
    const session = await sessionWithInterruptedTurn();
    const calls: LanguageModelV3CallOptions[] = [];
    const pipeline = contextPipeline({ model: recordingModel(calls), session });
    const lateResult: ModelMessage = {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call-1",
          toolName: "lookup",
          output: { type: "text", value: "14:02" },
        },
      ],
    };

    await generateText({ model: pipeline.model, messages: [lateResult] });

    const prompt = calls[0]?.prompt ?? [];
    expect(callsWithoutResult(prompt)).toEqual([]);
    const results = prompt.flatMap((message) => (message.role === "tool" ? message.content : []));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolCallId: "call-1", output: { type: "text", value: "14:02" } });
  });
});
