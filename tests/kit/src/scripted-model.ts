import type {
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model step calling one tool. */
export function callTool(id: string, toolName: string, input: unknown): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
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

/** The text result the model saw for a tool call. */
export function toolResult(call: LanguageModelV3CallOptions | undefined, toolCallId: string): unknown {
  for (const message of call?.prompt ?? []) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result" && part.toolCallId === toolCallId)
        return (part.output as { value?: unknown }).value;
    }
  }
  return undefined;
}

/** The same script as a stream model: each generate result becomes a stream of parts. */
export function scriptedStreamModel(steps: LanguageModelV3GenerateResult[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async () => {
      const step = steps.shift();
      if (!step) throw new Error("the scripted model ran out of steps");
      return { stream: convertArrayToReadableStream(streamPartsOf(step)) };
    },
  });
}

function streamPartsOf(step: LanguageModelV3GenerateResult): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
  step.content.forEach((content, index) => {
    if (content.type === "text") {
      const id = `text-${index}`;
      parts.push(
        { type: "text-start", id },
        { type: "text-delta", id, delta: content.text },
        { type: "text-end", id },
      );
    } else if (content.type === "tool-call") {
      parts.push(content);
    }
  });
  parts.push({ type: "finish", finishReason: step.finishReason, usage: step.usage });
  return parts;
}

/** Each non-system message a call carried as `role: text`, tool parts as `[type toolName]`. */
export function conversation(call: LanguageModelV3CallOptions | undefined): string[] {
  return (call?.prompt ?? []).flatMap((message) => {
    if (message.role === "system") return [];
    const parts = message.content.map((part) => {
      if (part.type === "text") return part.text;
      if (part.type === "tool-call" || part.type === "tool-result") return `[${part.type} ${part.toolName}]`;
      return `[${part.type}]`;
    });
    return [`${message.role}: ${parts.join(" | ")}`];
  });
}
