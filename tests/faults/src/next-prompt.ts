import { runMessagesOf } from "@contextblocks/ai";
import type { SessionMessage } from "@contextblocks/sessions";
import { generateText, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";

/** The next turn's prompt as the pipeline builds it: the stored path replayed, then a new user message. */
function nextPrompt(path: readonly SessionMessage[]): ModelMessage[] {
  return [...(runMessagesOf(path) as ModelMessage[]), { role: "user", content: "the next turn" }];
}

/**
 * Why the next turn's prompt would be refused, or `null` when it is one providers accept: the prompt goes
 * through a real `generateText`, and the AI SDK refuses, as OpenAI and Anthropic do, a tool call whose
 * result does not follow it (`AI_MissingToolResultsError`) before any request leaves.
 */
export async function nextPromptProblem(path: readonly SessionMessage[]): Promise<string | null> {
  const model = new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "text", text: "next answer" }],
      finishReason: { unified: "stop", raw: undefined },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    }),
  });
  try {
    await generateText({ model, messages: nextPrompt(path) });
    return null;
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}

/**
 * The ids of the tool calls in the next turn's prompt whose result does not follow them before the next
 * user message: each one makes the prompt one providers refuse (the SDK names only the first).
 */
export function unansweredToolCalls(path: readonly SessionMessage[]): string[] {
  const unanswered: string[] = [];
  let open = new Set<string>();
  for (const message of nextPrompt(path)) {
    if (message.role === "assistant" && typeof message.content !== "string") {
      for (const part of message.content)
        if (part.type === "tool-call" && part.providerExecuted !== true) open.add(part.toolCallId);
    } else if (message.role === "tool") {
      for (const part of message.content) if (part.type === "tool-result") open.delete(part.toolCallId);
    } else {
      unanswered.push(...open);
      open = new Set();
    }
  }
  return unanswered;
}
