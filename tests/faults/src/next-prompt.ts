import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { type ContextPlugin, contextPipeline, runMessagesOf } from "@contextblocks/ai";
import type { SessionMessage } from "@contextblocks/sessions";
import { generateText, type ModelMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function recordingModel(prompts: LanguageModelV3Prompt[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options: LanguageModelV3CallOptions) => {
      prompts.push(options.prompt);
      return {
        content: [{ type: "text", text: "next answer" }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

/**
 * The next turn's prompt as the pipeline builds it and the model receives it: the stored path replayed by
 * the pipeline (as the session's history plugin loads it), then a new user message.
 */
async function nextPrompt(path: readonly SessionMessage[]): Promise<LanguageModelV3Prompt> {
  const replay: ContextPlugin = {
    sourceId: "stored-path",
    beforeCall: (context) => context.extendMessages("stored-path", runMessagesOf(path)),
  };
  const prompts: LanguageModelV3Prompt[] = [];
  const pipeline = contextPipeline({ model: recordingModel(prompts), plugins: [replay] });
  await generateText({ model: pipeline.model, prompt: "the next turn" });
  return prompts[0] ?? [];
}

/**
 * Why the next turn's prompt would be refused, or `null` when it is one providers accept: the prompt the
 * model received goes again through a real `generateText`, and the AI SDK refuses, as OpenAI and Anthropic
 * do, a tool call whose result does not follow it (`AI_MissingToolResultsError`) before any request leaves.
 */
export async function nextPromptProblem(path: readonly SessionMessage[]): Promise<string | null> {
  try {
    const received = await nextPrompt(path);
    await generateText({ model: recordingModel([]), messages: received as ModelMessage[] });
    return null;
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}

/**
 * The ids of the tool calls in the next turn's prompt whose result does not follow them before the next
 * user message: each one makes the prompt one providers refuse (the SDK names only the first).
 */
export async function unansweredToolCalls(path: readonly SessionMessage[]): Promise<string[]> {
  const unanswered: string[] = [];
  let open = new Set<string>();
  for (const message of await nextPrompt(path)) {
    if (message.role === "assistant") {
      for (const part of message.content)
        if (part.type === "tool-call" && part.providerExecuted !== true) open.add(part.toolCallId);
    } else if (message.role === "tool") {
      for (const part of message.content) if (part.type === "tool-result") open.delete(part.toolCallId);
    } else {
      unanswered.push(...open);
      open = new Set();
    }
  }
  return [...unanswered, ...open];
}
