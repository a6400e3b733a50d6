import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { SearchResult } from "@contextblocks/sessions";
import type { SqlStatement } from "@contextblocks/sql";
import { planQuery } from "@contextblocks/text";
import { catchUpSearchFields } from "./message-search-index.js";
import { messageSearchStatement } from "./message-search-statement.js";
import { timeText } from "./time-text.js";

/** Most search hits one call returns, as in `@contextblocks/sessions`. */
const maximumSearchLimit = 1_000;

/** A message search hit as stored: its searchable text (`text_content`), not its content. */
export interface MessageSearchRow {
  id: string;
  session_id: string;
  role: string;
  text: string;
  created_at: unknown;
}

/**
 * Message search over `assistant_messages` (one session's, or every session's when `sessionId` is
 * undefined), best first, at most `limit` (the caller checks the query and the limit). `read` runs the
 * statements: the search fields brought up to date (message-search-index.ts: one read, and one write when
 * messages changed since the last search), then the one search statement.
 */
export async function searchMessageRows(
  read: (statement: SqlStatement) => Promise<unknown[]>,
  query: string,
  limit: number,
  sessionId: string | undefined,
): Promise<MessageSearchRow[]> {
  const plan = planQuery(query);
  if (plan === null) return [];
  await catchUpSearchFields(read, sessionId);
  return (await read(messageSearchStatement(sessionId, plan, limit))) as MessageSearchRow[];
}

/** Search over every session's messages (`SessionBackend.searchMessages`): each hit names its `sessionId`. */
export async function searchAllSessions(
  read: (statement: SqlStatement) => Promise<unknown[]>,
  query: string,
  limit: number,
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
  return (await searchMessageRows(read, query, count, undefined)).map((row) => {
    const result: SearchResult = { id: row.id, role: row.role, content: row.text, sessionId: row.session_id };
    if (row.created_at !== null && row.created_at !== undefined) result.createdAt = timeText(row.created_at);
    return result;
  });
}
