import { ContextError } from "@contextblocks/core";
import type { SearchResult } from "@contextblocks/sessions";
import type { SqlClient } from "@contextblocks/sql";
import { fts5MatchExpression, planQuery } from "@contextblocks/text";

/**
 * Message search over `assistant_fts`, with the query planning of `@contextblocks/fts5` (the one place
 * the session store touches it): the query is words, never FTS5 syntax; every word and adjacent pair is ORed, and FTS5
 * ranks the matches by bm25 itself, in one statement.
 */
export interface MessageSearchOptions {
  limit: number;
  /** One session's messages; omitted: every session's (the manager's cross-session search). */
  sessionId?: string | undefined;
}

export const maximumSearchLimit = 1_000;

interface Row {
  id: string;
  session_id: string;
  role: string;
  content: string;
  created_at: string | null;
}

export async function searchMessageIndex(
  client: SqlClient,
  query: string,
  options: MessageSearchOptions,
): Promise<SearchResult[]> {
  if (typeof query !== "string") {
    throw new ContextError("INVALID_INPUT", `search: the query must be a string, got ${typeof query}`);
  }
  const limit = Math.floor(Number(options.limit));
  if (!Number.isFinite(limit) || limit < 1 || limit > maximumSearchLimit) {
    throw new ContextError(
      "INVALID_INPUT",
      `search: limit must be a whole number from 1 to ${maximumSearchLimit}, got ${String(options.limit)}`,
    );
  }
  const plan = planQuery(query);
  if (plan === null) return [];
  const expression = fts5MatchExpression(plan, { column: "content" });
  const sessionId = options.sessionId;
  const rows =
    sessionId === undefined
      ? await client.query<Row>`
          SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content,
            m.created_at AS created_at
          FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
          WHERE assistant_fts MATCH ${expression} ORDER BY f.rank LIMIT ${limit}`
      : await client.query<Row>`
          SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content,
            m.created_at AS created_at
          FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
          WHERE assistant_fts MATCH ${expression} AND f.session_id = ${sessionId}
          ORDER BY f.rank LIMIT ${limit}`;
  return rows.map((row) => {
    const result: SearchResult = { id: row.id, role: row.role, content: row.content };
    if (row.created_at !== null) result.createdAt = row.created_at;
    if (sessionId === undefined) result.sessionId = row.session_id;
    return result;
  });
}
