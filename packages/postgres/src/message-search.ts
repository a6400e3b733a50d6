import { ContextError, describeValue } from "@contextblocks/core";
import { parseStoredMessage, type SearchResult, textOfMessage } from "@contextblocks/sessions";
import type { SqlStatement } from "@contextblocks/sql";
import { planQuery } from "@contextblocks/text";
import { catchUpSearchFields } from "./message-search-index.js";
import { messageSearchStatement } from "./message-search-statement.js";
import { timeText } from "./time-text.js";

/** Most search hits one call returns, as in `@contextblocks/sessions`. */
const maximumSearchLimit = 1_000;

interface Row {
  id: string;
  session_id: string;
  role: string;
  content: string;
  created_at: unknown;
}

/**
 * Message search over `assistant_messages` (one session's, or every session's when `sessionId` is
 * undefined: then each hit names its `sessionId`). `read` runs the statements: the search fields brought up
 * to date (message-search-index.ts: one read, and one write when messages changed since the last search),
 * then the one search statement.
 */
export async function searchMessages(
  read: (statement: SqlStatement) => Promise<unknown[]>,
  query: string,
  limit: number,
  sessionId: string | undefined,
): Promise<SearchResult[]> {
  if (typeof query !== "string") {
    throw new ContextError(
      "INVALID_INPUT",
      `search: the query must be a string, got ${describeValue(query)}`,
    );
  }
  const count = Math.floor(Number(limit));
  if (!Number.isFinite(count) || count < 1 || count > maximumSearchLimit) {
    throw new ContextError(
      "INVALID_INPUT",
      `search: limit must be a whole number from 1 to ${maximumSearchLimit}, got ${String(limit)}`,
    );
  }
  const plan = planQuery(query);
  if (plan === null) return [];
  await catchUpSearchFields(read, sessionId);
  const rows = (await read(messageSearchStatement(sessionId, plan, count))) as Row[];
  const results: SearchResult[] = [];
  for (const row of rows) {
    const message = parseStoredMessage(row.content);
    if (message === null) continue;
    const result: SearchResult = { id: row.id, role: row.role, content: textOfMessage(message) };
    if (row.created_at !== null && row.created_at !== undefined) result.createdAt = timeText(row.created_at);
    if (sessionId === undefined) result.sessionId = row.session_id;
    results.push(result);
  }
  return results;
}
