import { estimateTokens } from "@contextblocks/core";
import { tokensPerMessage } from "@contextblocks/sessions/store-kit";
import type { RunMessage } from "./model-types.js";

/**
 * Estimated tokens of model messages as a call sends them, counted as `estimateMessageTokens` of
 * `@contextblocks/sessions` counts stored messages (text, tool inputs and outputs as JSON, framing per
 * message), so the two add up when a session calibrates its estimate by a provider's usage.
 */
export function estimateRunMessageTokens(messages: readonly RunMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += tokensPerMessage;
    if (typeof message.content === "string") {
      total += estimateTokens(message.content);
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") total += estimateTokens(part.text);
      else if (part.type === "tool-call") total += estimateJson(part.input);
      else if (part.type === "tool-result") total += estimateJson(part.output);
    }
  }
  return total;
}

function estimateJson(value: unknown): number {
  if (typeof value === "string") return estimateTokens(value);
  try {
    return estimateTokens(JSON.stringify(value) ?? "");
  } catch {
    return 0;
  }
}
