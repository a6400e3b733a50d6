import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { SearchResult } from "@contextblocks/sessions";
import {
  candidateCount,
  checkSearchLimit,
  maximumSearchLimit,
  rerankSearchCandidates,
  type SearchCandidate,
  type SearchRanking,
  selectSearchHits,
} from "@contextblocks/sessions/store-kit";
import type { SqlStatement } from "@contextblocks/sql";
import { isReadOnlyRefusal } from "@contextblocks/sql/store-kit";
import { planQuery, writtenText } from "@contextblocks/text";
import { catchUpSearchFields } from "./message-search-index.js";
import { messageSearchStatement } from "./message-search-statement.js";
import { defaultPostgresSearchRanking } from "./postgres-search-ranking.js";
import { timeText } from "./time-text.js";

/** A message search hit as stored: its searchable text (`text_content`), not its content. */
export interface MessageSearchRow {
  id: string;
  session_id: string;
  role: string;
  text: string;
  created_at: unknown;
  parent_id: string | null;
  grandparent_id: string | null;
  /** The message's relevance before the day's share (which lifts every turn of a day alike), higher is better. */
  relevance: number | string;
  /** 1 when the message's own text holds a query word, 0 when only the turns around it do. */
  own_hit: number | string;
  /** Whether a message still waited for its search fields when the hits were read (the search runs again). */
  fields_pending?: boolean | string;
}

/** A row as a search candidate (`selectSearchHits` makes hits of them). */
export function candidateOf(row: MessageSearchRow): SearchCandidate {
  return {
    id: row.id,
    role: row.role,
    // Stored with its words in a compatibility form after it (`searchableText`): handed back as written.
    text: writtenText(row.text),
    createdAt: row.created_at === null || row.created_at === undefined ? null : timeText(row.created_at),
    score: Number(row.relevance),
    matchedBy: Number(row.own_hit) === 1 ? "text" : "neighbours",
    parentId: row.parent_id,
    grandparentId: row.grandparent_id,
    sessionId: row.session_id,
  };
}

/**
 * Message search over `assistant_messages` (one session's, or every session's when `sessionId` is
 * undefined), best first, at most `limit` (the caller checks the query and the limit). `read` runs the
 * statements: the one search statement, whose hits say whether any message still waits for its search fields
 * (message-search-index.ts); only then, or when there is no hit to say it, are the fields brought up to date
 * (one read, and one write when messages changed; none in a read-only transaction), and the search run again.
 */
export async function searchMessageRows(
  read: (statement: SqlStatement) => Promise<unknown[]>,
  query: string,
  limit: number,
  sessionId: string | undefined,
  ranking: SearchRanking = defaultPostgresSearchRanking,
): Promise<MessageSearchRow[]> {
  const plan = planQuery(query);
  if (plan === null) return [];
  const statement = messageSearchStatement(sessionId, plan, limit, ranking);
  const rows = (await read(statement)) as MessageSearchRow[];
  // The hits say whether any message waits for its search fields; no hit cannot say, so then it is looked up
  // (as it is for any answer but \`false\`: a driver that returns booleans as text costs a look-up, never a field).
  const pending = rows.length === 0 || rows[0]?.fields_pending !== false;
  if (!pending || !(await catchUpWhereWritable(read, sessionId))) return rows;
  return (await read(statement)) as MessageSearchRow[];
}

/**
 * `catchUpSearchFields` where the database takes writes. In a read-only transaction (a hot standby,
 * `default_transaction_read_only`) the hits stand as found: a message still waiting for its fields (one an
 * earlier release stored) is found by its text, without its speaker and day, until a writer's search fills
 * them in. Any other failure is the search's.
 */
async function catchUpWhereWritable(
  read: (statement: SqlStatement) => Promise<unknown[]>,
  sessionId: string | undefined,
): Promise<boolean> {
  try {
    return await catchUpSearchFields(read, sessionId);
  } catch (error) {
    if (isReadOnlyRefusal(error)) return false;
    throw error;
  }
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
  const count = checkSearchLimit(limit);
  const rows = await searchMessageRows(read, query, candidateCount(count, maximumSearchLimit), undefined);
  return selectSearchHits(rerankSearchCandidates(query, rows.map(candidateOf)), count);
}
