import { estimateTokens } from "@contextblocks/core";
import type { SessionMessage } from "./message.js";

/** Framing tokens per message (role, separators), as providers bill them roughly. */
export const tokensPerMessage = 4;

/**
 * Estimated tokens of messages: text and reasoning, tool inputs and outputs (as JSON), plus framing per
 * message. Uses core's `estimateTokens` so blocks and messages are counted the same way.
 */
export function estimateMessageTokens(messages: readonly SessionMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += tokensPerMessage;
    for (const part of message.parts) {
      if (typeof part.text === "string") total += estimateTokens(part.text);
      if (typeof part.reasoning === "string") total += estimateTokens(part.reasoning);
      if (part.input !== undefined) total += estimateValue(part.input);
      if (part.output !== undefined) total += estimateValue(part.output);
      else if (part.result !== undefined) total += estimateValue(part.result);
    }
  }
  return total;
}

function estimateValue(value: unknown): number {
  if (typeof value === "string") return estimateTokens(value);
  try {
    return estimateTokens(JSON.stringify(value) ?? "");
  } catch {
    return estimateTokens(String(value));
  }
}
