import type { LanguageModelV3CallOptions, LanguageModelV3Message } from "@ai-sdk/provider";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

/** OpenAI and Anthropic cache a prefix only from this many tokens on. */
export const MINIMUM_CACHED_PREFIX = 1024;

/**
 * What the model provider receives, in the order providers cache it: tool definitions, then the system
 * prompt, then the messages. Written as the text the model reads (roles, part contents, tool calls and
 * results), not as an HTTP body, so the token count is close to what a provider bills.
 */
export function requestText(call: LanguageModelV3CallOptions): string {
  const sections: string[] = [];
  for (const tool of call.tools ?? []) {
    if (tool.type !== "function") continue;
    sections.push(`tool ${tool.name}\n${tool.description ?? ""}\n${JSON.stringify(tool.inputSchema)}`);
  }
  for (const message of call.prompt) sections.push(messageText(message));
  return sections.join("\n\n");
}

function messageText(message: LanguageModelV3Message): string {
  if (message.role === "system") return `system\n${message.content}`;
  const parts = message.content.map((part) => {
    switch (part.type) {
      case "text":
      case "reasoning":
        return part.text;
      case "tool-call":
        return `tool-call ${part.toolName} ${part.toolCallId} ${JSON.stringify(part.input)}`;
      case "tool-result": {
        const output = part.output;
        const value =
          output.type === "text" || output.type === "error-text"
            ? output.value
            : JSON.stringify("value" in output ? output.value : output);
        return `tool-result ${part.toolName} ${part.toolCallId}\n${value}`;
      }
      default:
        return JSON.stringify(part);
    }
  });
  return `${message.role}\n${parts.join("\n")}`;
}

/** o200k tokens (gpt-4o and later). */
export function tokenize(text: string): number[] {
  return encode(text);
}

/** Length of the longest common prefix of two token lists. */
export function commonPrefixLength(previous: readonly number[], current: readonly number[]): number {
  const limit = Math.min(previous.length, current.length);
  let index = 0;
  while (index < limit && previous[index] === current[index]) index += 1;
  return index;
}

/**
 * Tokens a prefix cache serves for `current` after `previous`: the longest common token prefix, counted
 * only when it reaches `MINIMUM_CACHED_PREFIX` (whole-prefix terms, no 128-token rounding).
 */
export function cachedTokens(previous: readonly number[] | undefined, current: readonly number[]): number {
  if (previous === undefined) return 0;
  const common = commonPrefixLength(previous, current);
  return common >= MINIMUM_CACHED_PREFIX ? common : 0;
}
