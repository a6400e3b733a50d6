import { estimateTokens } from "@contextblocks/core";
import type { SessionMessage } from "./message.js";
import { applyCompactions } from "./overlays.js";
import type { StoredCompaction } from "./session-store.js";

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

/**
 * The token stamp a store keeps on a message's row when it is appended (or updated): its estimate, as
 * Cloudflare agents' `agents/sessions` stamps `token_estimate` per row, so the path's total is summed
 * from the rows (`SessionStore.getPathTokens`) instead of re-estimating every message's content.
 */
export function messageTokenStamp(message: SessionMessage): number {
  return estimateMessageTokens([message]);
}

/** A checked token stamp read from storage: a whole number ≥ 0, or `null` (a row without one). */
export function storedTokenStamp(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const number = Number(value);
  return Number.isFinite(number) && number >= 0 ? Math.floor(number) : null;
}

/** A stamped step of a path, root first: its id and its tokens (stamped, or estimated from content). */
export interface PathTokenRow {
  id: string;
  role: string;
  tokens: number;
}

/**
 * The path's tokens as `getHistory` returns it: each overlay's range replaced by its summary (planned by
 * `applyCompactions` on content-free stand-ins, exactly as a history read applies them).
 */
export function pathTokensWithOverlays(
  rows: readonly PathTokenRow[],
  compactions: readonly StoredCompaction[],
): number {
  let total = 0;
  if (compactions.length === 0) {
    for (const row of rows) total += row.tokens;
    return total;
  }
  const tokens = new Map<SessionMessage, number>();
  const standIns = rows.map((row) => {
    const standIn: SessionMessage = { id: row.id, role: row.role, parts: [] };
    tokens.set(standIn, row.tokens);
    return standIn;
  });
  for (const entry of applyCompactions(standIns, compactions)) {
    total += tokens.get(entry) ?? estimateMessageTokens([entry]);
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
