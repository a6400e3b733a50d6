import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A mock model playing `steps` in order. */
export function scripted(steps: LanguageModelV3GenerateResult[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const step = steps.shift();
      if (!step) throw new Error("the scripted model ran out of steps");
      return step;
    },
  });
}

/** A model step calling tools, in parallel as the AI SDK runs them. */
export function toolStep(calls: Array<{ toolName: string; input: unknown }>): LanguageModelV3GenerateResult {
  return {
    content: calls.map((call, index) => ({
      type: "tool-call" as const,
      toolCallId: `call-${index}`,
      toolName: call.toolName,
      input: JSON.stringify(call.input),
    })),
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** A model step answering with text. */
export function answer(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  };
}
