import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { contextPipeline } from "@contextblocks/ai";
import { type Session, SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { OriginalMockLanguageModelV3 as MockLanguageModelV3 } from "../src/ai-test.js";

/**
 * ai 7 still accepts a V3 model (a provider not yet moved to V4): the shared test files run on the V4 mock
 * here, so this file runs the session path once on the V3 mock, through the built package as a user has it.
 */
const usage = {
  inputTokens: { total: 40, noCache: 40, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function chatSession(): Session {
  return new SessionBuilder(inMemoryBackend())
    .forSession("chat-1")
    .withContext("soul", { provider: { get: async () => "You are a friendly assistant." } })
    .withContext("memory", { description: "Facts about the user", maxTokens: 400 })
    .build();
}

describe("a V3 model under ai 7", () => {
  it("runs the session pipeline through generateText: memory written, the turn stored", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            {
              type: "tool-call",
              toolCallId: "call-1",
              toolName: "set_context",
              input: JSON.stringify({ label: "memory", content: "Name: Ada." }),
            },
          ],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        },
        {
          content: [{ type: "text", text: "Hello Ada." }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        },
      ],
    });
    const session = chatSession();
    const pipeline = contextPipeline({ model, session });
    const result = await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "I am Ada.",
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Hello Ada.");
    expect(session.context.getBlock("memory")?.content).toBe("Name: Ada.");
    expect(model.doGenerateCalls[0]?.prompt[0]).toMatchObject({ role: "system" });
    const stored = await session.getHistory();
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "assistant"]);
  });

  it("runs it through streamText: the turn is stored once the stream has finished", async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream({
          start(controller) {
            const parts: LanguageModelV3StreamPart[] = [
              { type: "stream-start", warnings: [] },
              { type: "text-start", id: "t" },
              { type: "text-delta", id: "t", delta: "Hi there." },
              { type: "text-end", id: "t" },
              { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
            ];
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      }),
    });
    const session = chatSession();
    const pipeline = contextPipeline({ model, session });
    const result = streamText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello." });
    expect(await result.text).toBe("Hi there.");
    const stored = await session.getHistory();
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant"]);
  });
});
