import { ContextError } from "@contextblocks/core";
import type { SessionMessage } from "./message.js";

/**
 * How every backend stores a message: the JSON of the whole message in one text column, as Cloudflare
 * agents' Sessions API does (so rows either side wrote are read by the other). One home for the codec and
 * for putting a path read in order; the SQL around it is the backend's.
 */

/** Longest path a read walks before it stops: a bound on a corrupt (cyclic) parent chain. */
export const maximumPathLength = 100_000;

/** The stored text of a message; a value JSON cannot hold fails with `INVALID_INPUT` naming the message. */
export function serializeMessage(message: SessionMessage): string {
  try {
    // JSON escapes NUL and lone surrogates, so the text is valid UTF-8 (SQLite) and Postgres text.
    return JSON.stringify(message);
  } catch (error) {
    throw new ContextError(
      "INVALID_INPUT",
      `message "${message.id}" cannot be stored as JSON: ${String(error)}`,
      { cause: error },
    );
  }
}

/** A stored row that is not a message (hand-edited, another writer) reads as `null` and is skipped. */
export function parseStoredMessage(content: string): SessionMessage | null {
  try {
    const value = JSON.parse(content) as Partial<SessionMessage> | null;
    if (typeof value?.id === "string" && typeof value.role === "string" && Array.isArray(value.parts)) {
      return value as SessionMessage;
    }
  } catch {
    // Not JSON: skipped.
  }
  return null;
}

/** The messages of stored rows, in order, skipping rows that are not messages. */
export function parseStoredMessages(rows: readonly { content: string }[]): SessionMessage[] {
  const messages: SessionMessage[] = [];
  for (const row of rows) {
    const message = parseStoredMessage(row.content);
    if (message !== null) messages.push(message);
  }
  return messages;
}

/**
 * Rows of a path read leaf-first with a `step` (0 at the leaf), put root first. A path has one row per step;
 * a row seen again (a cyclic chain) is dropped.
 */
export function orderPath<Row extends { id: string; step: number }>(rows: readonly Row[]): Row[] {
  const sorted = [...rows].sort((left, right) => right.step - left.step);
  const seen = new Set<string>();
  return sorted.filter((row) => {
    if (seen.has(row.id)) return false;
    seen.add(row.id);
    return true;
  });
}

/**
 * `getHistory` never drops the oldest messages of a path silently: a walk that reached `maximumPathLength`
 * steps with a parent still to go fails with `INVALID_INPUT` naming the limit (read such a path with
 * `getRecentHistory`, which says `truncated`). `ordered` is root first, as `orderPath` returns it.
 */
export function checkWholePath(
  ordered: readonly { id: string; parent_id?: string | null }[],
  operation: string,
): void {
  const oldest = ordered[0];
  if (ordered.length > maximumPathLength && oldest !== undefined && (oldest.parent_id ?? null) !== null) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: the path to "${ordered.at(-1)?.id}" is longer than ${maximumPathLength} messages (or its parent links loop); read it with getRecentHistory, which says when it is truncated`,
    );
  }
}
