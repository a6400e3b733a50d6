import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model step answering with text. */
export function answer(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  };
}

/** A mock model playing `steps` in order. */
export function scriptedModel(steps: LanguageModelV3GenerateResult[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const step = steps.shift();
      if (!step) throw new Error("the scripted model ran out of steps");
      return step;
    },
  });
}

/** The text of the user prompt a call received. */
export function promptText(call: LanguageModelV3CallOptions | undefined): string {
  return (call?.prompt ?? [])
    .flatMap((message) =>
      message.role === "user"
        ? message.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
        : [],
    )
    .join("\n");
}
