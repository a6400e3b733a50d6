import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { streamText } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { contextPipeline, InMemoryHistoryPlugin, messageText } from "../../src/index.js";
import { responseMessages, toRunMessage } from "../../src/pipeline/run-messages.js";
import { StreamedContent } from "../../src/pipeline/streamed-content.js";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

describe("responseMessages", () => {
  it("makes one assistant message of text, reasoning, files, tool calls and provider-executed results", () => {
    const messages = responseMessages([
      { type: "reasoning", text: "Thinking." },
      { type: "text", text: "" },
      { type: "text", text: "Answer.", providerMetadata: { openai: { id: "x" } } },
      { type: "file", mediaType: "image/png", data: "aGk=" },
      { type: "tool-call", toolCallId: "1", toolName: "search", input: '{"q":"tea"}' },
      { type: "tool-call", toolCallId: "2", toolName: "broken", input: "not json" },
      { type: "tool-result", toolCallId: "3", toolName: "web", result: { hits: 2 } },
      { type: "tool-result", toolCallId: "4", toolName: "web", result: "partial", preliminary: true },
      { type: "tool-result", toolCallId: "5", toolName: "web", result: "down", isError: true },
      { type: "source", sourceType: "url", id: "s", url: "https://example.com" },
    ]);
    expect(messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Thinking." },
          { type: "text", text: "Answer.", providerOptions: { openai: { id: "x" } } },
          { type: "file", mediaType: "image/png", data: "aGk=" },
          { type: "tool-call", toolCallId: "1", toolName: "search", input: { q: "tea" } },
          // Not JSON: stored as the AI SDK sends such a call back on the next step.
          { type: "tool-call", toolCallId: "2", toolName: "broken", input: {} },
          {
            type: "tool-result",
            toolCallId: "3",
            toolName: "web",
            output: { type: "json", value: { hits: 2 } },
          },
          {
            type: "tool-result",
            toolCallId: "5",
            toolName: "web",
            output: { type: "error-json", value: "down" },
          },
        ],
      },
    ]);
    expect(responseMessages([{ type: "text", text: "" }])).toEqual([]);
  });
});

describe("StreamedContent", () => {
  it("joins deltas per id in the order parts started, like the generated content", () => {
    const collected = new StreamedContent();
    const parts: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "reasoning-start", id: "r" },
      { type: "text-start", id: "a" },
      { type: "reasoning-delta", id: "r", delta: "Hm" },
      { type: "text-delta", id: "a", delta: "Hel" },
      { type: "reasoning-delta", id: "r", delta: "m." },
      { type: "text-delta", id: "a", delta: "lo." },
      { type: "text-end", id: "a" },
      { type: "reasoning-end", id: "r" },
      { type: "tool-call", toolCallId: "1", toolName: "search", input: "{}" },
      { type: "finish", usage, finishReason: { unified: "tool-calls", raw: undefined } },
    ];
    for (const part of parts) collected.add(part);
    expect(collected.failed).toBe(false);
    expect(collected.result()).toEqual([
      { type: "reasoning", text: "Hmm." },
      { type: "text", text: "Hello." },
      { type: "tool-call", toolCallId: "1", toolName: "search", input: "{}" },
    ]);
  });

  it("stores only the caller's message, never the half answer, for a stream that carried an error", async () => {
    const history = new InMemoryHistoryPlugin("memory");
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "a" },
          { type: "text-delta", id: "a", delta: "Half an ans" },
          { type: "error", error: new Error("connection reset") },
          { type: "finish", usage, finishReason: { unified: "error", raw: undefined } },
        ]),
      }),
    });
    const pipeline = contextPipeline({ model, plugins: [history] });
    const errors: unknown[] = [];
    const result = streamText({
      model: pipeline.model,
      prompt: "hi",
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    // The caller passes only new messages: its message is kept for the next turn; the broken answer is not.
    expect(history.messages("default")).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
  });
});

describe("toRunMessage and messageText", () => {
  it("reads string content as one text part and joins text parts", () => {
    const message = toRunMessage({ role: "assistant", content: "Hello." });
    expect(message).toEqual({ role: "assistant", content: [{ type: "text", text: "Hello." }] });
    expect(
      messageText({
        role: "user",
        content: [
          { type: "text", text: "One" },
          { type: "file", data: "aGk=", mediaType: "text/plain" },
          { type: "text", text: "Two" },
        ],
      }),
    ).toBe("One\nTwo");
    expect(messageText({ role: "system", content: "Rules." })).toBe("Rules.");
  });
});
