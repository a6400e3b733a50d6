import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import type { ContextTracer, TraceAttributes } from "@contextblocks/core";
import { type Session, SessionBuilder, type SessionEvent } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, streamText } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";
import { anthropicAnswer, openaiAnswer, recordingFetch } from "./provider-requests.js";

/**
 * The prompt cache read back: the cache read and write tokens the provider reports reach
 * `session.reportUsage` (its `usage-reported` event) and the span the pipeline opens per model call.
 */
interface RecordedSpan {
  name: string;
  attributes: TraceAttributes;
}

function recordingTracer(): ContextTracer & { spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  return {
    spans,
    async span(name, attributes, operation) {
      const recorded = { name, attributes: { ...attributes } };
      spans.push(recorded);
      return operation({ setAttributes: (more) => Object.assign(recorded.attributes, more) });
    },
  };
}

function observedSession(): { session: Session; usage: SessionEvent[] } {
  const session = new SessionBuilder(inMemoryBackend())
    .forSession("chat-1")
    .withContext("soul", { provider: { get: async () => "You are a friendly assistant." } })
    .build();
  const usage: SessionEvent[] = [];
  session.subscribe((event) => {
    if (event.type === "usage-reported") usage.push(event);
  });
  return { session, usage };
}

describe("the cache read back", () => {
  it("Anthropic: cache write tokens reach the session's usage-reported event and the call's span", async () => {
    const recorded = recordingFetch(() => anthropicAnswer("Hi.", { read: 0, write: 100 }));
    const { session, usage } = observedSession();
    const tracer = recordingTracer();
    const model = createAnthropic({ apiKey: "test", fetch: recorded.fetch })("claude-sonnet-4-5");
    const pipeline = contextPipeline({ model, session, tracer });
    const result = await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello." });
    expect(result.text).toBe("Hi.");
    expect(usage).toEqual([
      {
        type: "usage-reported",
        sessionId: "chat-1",
        inputTokens: 110,
        cacheReadTokens: 0,
        cacheWriteTokens: 100,
      },
    ]);
    expect(tracer.spans).toEqual([
      {
        name: "chat claude-sonnet-4-5",
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "anthropic.messages",
          "gen_ai.request.model": "claude-sonnet-4-5",
          "gen_ai.conversation.id": "chat-1",
          "gen_ai.usage.input_tokens": 110,
          "gen_ai.usage.output_tokens": 3,
          "gen_ai.usage.cache_read.input_tokens": 0,
          "gen_ai.usage.cache_creation.input_tokens": 100,
        },
      },
    ]);
  });

  it("OpenAI (GPT-5.6, Responses API): cache read and write tokens, one span per model call", async () => {
    const recorded = recordingFetch((body) =>
      openaiAnswer("Hi.", String(body.model), { read: 150, write: 20 }),
    );
    const { session, usage } = observedSession();
    const tracer = recordingTracer();
    const model = createOpenAI({ apiKey: "test", fetch: recorded.fetch })("gpt-5.6-terra");
    const pipeline = contextPipeline({ model, session, tracer });
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello." });
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Again." });
    expect(usage).toHaveLength(2);
    expect(usage[1]).toMatchObject({ inputTokens: 200, cacheReadTokens: 150, cacheWriteTokens: 20 });
    expect(tracer.spans.map((span) => span.name)).toEqual(["chat gpt-5.6-terra", "chat gpt-5.6-terra"]);
    expect(tracer.spans[1]!.attributes).toMatchObject({
      "gen_ai.provider.name": "openai.responses",
      "gen_ai.usage.cache_read.input_tokens": 150,
      "gen_ai.usage.cache_creation.input_tokens": 20,
    });
  });

  it("streamText: the usage of the finish part, once the stream has finished", async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hi." },
      { type: "text-end", id: "t" },
      {
        type: "finish",
        finishReason: { unified: "stop", raw: undefined },
        usage: {
          inputTokens: { total: 1_000, noCache: 50, cacheRead: 900, cacheWrite: 50 },
          outputTokens: { total: 3, text: 3, reasoning: undefined },
        },
      },
    ];
    const model = new MockLanguageModelV3({
      doStream: async () => ({ stream: convertArrayToReadableStream(parts) }),
    });
    const { session, usage } = observedSession();
    const tracer = recordingTracer();
    const pipeline = contextPipeline({ model, session, tracer });
    const result = streamText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello." });
    expect(await result.text).toBe("Hi.");
    expect(usage).toEqual([
      {
        type: "usage-reported",
        sessionId: "chat-1",
        inputTokens: 1_000,
        cacheReadTokens: 900,
        cacheWriteTokens: 50,
      },
    ]);
    expect(tracer.spans[0]!.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 1_000,
      "gen_ai.usage.cache_read.input_tokens": 900,
      "gen_ai.usage.cache_creation.input_tokens": 50,
    });
  });

  it("a model that fails: its span records the failure, the caller gets the model's error", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new Error("overloaded");
      },
    });
    const { session, usage } = observedSession();
    const failures: unknown[] = [];
    const tracer: ContextTracer = {
      async span(_name, _attributes, operation) {
        try {
          return await operation({ setAttributes: () => undefined });
        } catch (error) {
          failures.push(error);
          throw error;
        }
      },
    };
    const pipeline = contextPipeline({ model, session, tracer });
    await expect(generateText({ model: pipeline.model, prompt: "Hello.", maxRetries: 0 })).rejects.toThrow(
      /overloaded/,
    );
    expect(failures).toHaveLength(1);
    expect(usage).toEqual([]);
  });
});
