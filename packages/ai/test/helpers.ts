import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
  InMemoryStore,
} from "@contextblocks/core/memory";
import type { ModelMessage } from "ai";

// The scripted model is the workspace test kit's; `callTools` numbers its calls by step for these tests.
export { answer, scriptedModel, scriptedStreamModel } from "@contextblocks/test-kit/model";

export const SKILLS = {
  "pdf-forms": {
    content: "To fill a PDF form: read the fields first, then write each value.",
    description: "Filling PDF forms",
  },
  "sql-review": {
    content: "Review SQL for bound parameters and missing indexes.",
    description: "Reviewing SQL",
  },
};

/** Durable state shared by "restarts": providers and the prompt store all live in one store. */
export function createStore(): InMemoryStore {
  return new InMemoryStore();
}

/** A context like an agent's: soul (read-only), memory (writable), notes (searchable), skills (loadable). */
export function createContext(
  store: InMemoryStore,
  extra: ContextConfig[] = [],
  options: { today?: () => string } = {},
): ContextBlocks {
  const today = options.today;
  return new ContextBlocks(
    [
      { label: "soul", provider: { get: async () => "You are a careful assistant." } },
      {
        label: "memory",
        description: "Facts about the user",
        maxTokens: 60,
        provider: new InMemoryContextProvider({ store }),
      },
      { label: "notes", description: "Searchable notes", provider: new InMemorySearchProvider({ store }) },
      {
        label: "skills",
        description: "Skills to load",
        provider: new InMemorySkillProvider({ store, skills: SKILLS }),
      },
      ...(today
        ? [
            {
              label: "environment",
              provider: { get: async () => `Today is ${today()}.` },
              whenChanged: "remind" as const,
            },
          ]
        : []),
      ...extra,
    ],
    new InMemoryContextProvider({ store, label: "_system_prompt" }),
  );
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

export interface ScriptedCall {
  toolName: string;
  input: unknown;
}

/** A model step that calls tools (in parallel when several). `input` is JSON-encoded unless a string. */
export function callTools(step: number, ...calls: ScriptedCall[]): LanguageModelV3GenerateResult {
  return {
    content: calls.map((call, index) => ({
      type: "tool-call" as const,
      toolCallId: `call-${step}-${index}`,
      toolName: call.toolName,
      input: typeof call.input === "string" ? call.input : JSON.stringify(call.input),
    })),
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** The tool results a call's prompt carried, by tool call id: what the model was told. */
export function toolResultsSeen(
  call: LanguageModelV3CallOptions,
): Map<string, { type: string; value?: unknown }> {
  const results = new Map<string, { type: string; value?: unknown }>();
  for (const message of call.prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result")
        results.set(part.toolCallId, part.output as { type: string; value?: unknown });
    }
  }
  return results;
}

/** The text of the result the model saw for one tool call; fails when it saw none or not text. */
export function resultText(call: LanguageModelV3CallOptions | undefined, toolCallId: string): string {
  if (!call) throw new Error("no such model call");
  const output = toolResultsSeen(call).get(toolCallId);
  if (!output) throw new Error(`the model saw no result for ${toolCallId}`);
  if (typeof output.value !== "string")
    throw new Error(`result of ${toolCallId} is ${output.type}, not text`);
  return `${output.type === "text" ? "" : `[${output.type}] `}${output.value}`;
}

/** The system prompt a call carried. */
export function systemSeen(call: LanguageModelV3CallOptions | undefined): string {
  const first = call?.prompt[0];
  if (first?.role !== "system") throw new Error("the call has no system message");
  return first.content;
}

/** The tool definitions a call carried, serialized as sent. */
export function toolsSeen(call: LanguageModelV3CallOptions | undefined): string {
  return JSON.stringify(call?.tools ?? []);
}

/** The text parts of the last user message a call carried. */
export function lastUserTexts(call: LanguageModelV3CallOptions | undefined): string[] {
  const users = (call?.prompt ?? []).filter((message) => message.role === "user");
  const last = users.at(-1);
  if (last?.role !== "user") return [];
  return last.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
}

/** Every text part of every user message a call carried. */
export function allUserTexts(call: LanguageModelV3CallOptions | undefined): string[] {
  return (call?.prompt ?? []).flatMap((message) =>
    message.role === "user"
      ? message.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
      : [],
  );
}

/** Deep-freezes a value so any mutation by the code under test throws. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * Every step's response messages of a `generateText` result: `responseMessages` on ai 7 (where
 * `response.messages` holds the last step's only), `response.messages` on ai 6 (every step's).
 */
export function turnMessages(result: { response: { messages: ModelMessage[] } }): ModelMessage[] {
  return "responseMessages" in result
    ? (result.responseMessages as ModelMessage[])
    : result.response.messages;
}

/** `turnMessages` of a `streamText` result. */
export async function streamedTurnMessages(result: {
  response: PromiseLike<{ messages: ModelMessage[] }>;
}): Promise<ModelMessage[]> {
  return "responseMessages" in result
    ? ((await result.responseMessages) as ModelMessage[])
    : (await result.response).messages;
}
