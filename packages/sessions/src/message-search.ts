import { ContextError } from "@contextblocks/core";
import { matchExpression, planQuery, rerank } from "@contextblocks/fts5";
import type { SqlClient } from "@contextblocks/sql";
import type { SearchResult } from "./session-provider.js";

/**
 * Message search over `assistant_fts`, with the query planning and ranking of `@contextblocks/fts5`
 * (the one place sessions touch those names): the query is words, never FTS5 syntax; bm25 picks the
 * candidates and fts5's re-ranking orders them (whole-phrase matches first, then coverage of the query).
 */
export interface MessageSearchOptions {
  limit: number;
  /** One session's messages; omitted: every session's (the manager's cross-session search). */
  sessionId?: string | undefined;
}

/** Candidates read per result before the re-ranking picks the best. */
const candidatesPerResult = 5;
const minimumCandidates = 50;
export const maximumSearchLimit = 1_000;

interface Row {
  id: string;
  session_id: string;
  role: string;
  content: string;
  rank: number;
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
  const expression = matchExpression(null, plan, false);
  const pool = Math.max(minimumCandidates, limit * candidatesPerResult);
  const sessionId = options.sessionId;
  const rows =
    sessionId === undefined
      ? await client.query<Row>`
          SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content, f.rank AS rank,
            m.created_at AS created_at
          FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
          WHERE assistant_fts MATCH ${expression} ORDER BY f.rank LIMIT ${pool}`
      : await client.query<Row>`
          SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content, f.rank AS rank,
            m.created_at AS created_at
          FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
          WHERE assistant_fts MATCH ${expression} AND f.session_id = ${sessionId}
          ORDER BY f.rank LIMIT ${pool}`;
  const byKey = new Map(rows.map((row) => [`${row.session_id}\u0000${row.id}`, row]));
  const ranked = rerank(
    rows.map((row) => ({ key: `${row.session_id}\u0000${row.id}`, content: row.content, rank: row.rank })),
    plan,
    new Map(),
    false,
  );
  return ranked.slice(0, limit).flatMap((candidate) => {
    const row = byKey.get(candidate.key);
    if (row === undefined) return [];
    const result: SearchResult = { id: row.id, role: row.role, content: row.content };
    if (row.created_at !== null) result.createdAt = row.created_at;
    if (sessionId === undefined) result.sessionId = row.session_id;
    return [result];
  });
}
