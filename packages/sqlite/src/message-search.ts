import { ContextError } from "@contextblocks/core";
import type { SearchResult } from "@contextblocks/sessions";
import { raw, type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { fts5MatchExpression, planQuery } from "@contextblocks/text";

/**
 * Message search over `assistant_fts`: what each message's row holds, and how a search ranks them.
 *
 * Contextual indexing (as in Anthropic's "contextual retrieval" and MemMachine's contextualized retrieval):
 * a message's row holds its own text in `content` and, in `context`, the text of the messages before it on
 * its own branch (its parent and grandparent: `contextTurns`). A question's words often sit in the turn that
 * asked, while the answer is the next turn: the answer's row then matches through its context. `context` is
 * weighted at `contextWeight` of `content` in bm25 and is never returned.
 *
 * The context of a row is read from the rows of its ancestors when the row is written (by the lazy indexer
 * of message-index.ts in rowid order, ancestors first, or at append with `indexOnAppend`): an append writes one FTS row and never rewrites an older one. Updating or
 * deleting a message rewrites the context of its children and grandchildren (`refreshContextStatements`);
 * branches are separate by construction (a row's context is its own path); compaction overlays change no row,
 * so the turns under them stay searchable.
 *
 * The query is words, never FTS5 syntax (`planQuery`): every word and adjacent pair is ORed, and FTS5 ranks
 * the matches by bm25 itself, in one statement.
 */
export interface MessageSearchOptions {
  limit: number;
  /** One session's messages; omitted: every session's (the manager's cross-session search). */
  sessionId?: string | undefined;
}

export const maximumSearchLimit = 1_000;

/** Ancestors whose text a message's row carries as context. */
export const contextTurns = 2;

/** bm25 weight of the context column against 1 for the message's own text. */
export const contextWeight = 0.3;

interface Row {
  id: string;
  session_id: string;
  role: string;
  content: string;
  created_at: string | null;
}

/**
 * Whether `assistant_fts` has our `context` column: a table Cloudflare agents' Sessions API created has
 * not (FTS5 tables cannot be altered), and is then searched by message text alone.
 */
const shapes = new WeakMap<SqlClient, Promise<boolean>>();

export function hasContextColumn(client: SqlClient): Promise<boolean> {
  let shape = shapes.get(client);
  if (shape === undefined) {
    shape = client.query<{ name: string }>`SELECT name FROM pragma_table_info('assistant_fts')`.then((rows) =>
      rows.some((row) => row.name === "context"),
    );
    shape.catch(() => shapes.delete(client));
    shapes.set(client, shape);
  }
  return shape;
}

/** The context text of the message `m` (an alias of `assistant_messages` in the statement): its ancestors' text. */
const contextOfM = `coalesce((SELECT f.content FROM assistant_messages p JOIN assistant_fts f ON f.rowid = p.rowid
    WHERE p.id = m.parent_id AND p.session_id = m.session_id), '')
  || char(10) ||
  coalesce((SELECT f.content FROM assistant_messages p
    JOIN assistant_messages g ON g.id = p.parent_id AND g.session_id = p.session_id
    JOIN assistant_fts f ON f.rowid = g.rowid
    WHERE p.id = m.parent_id AND p.session_id = m.session_id), '')`;

/**
 * The FTS row of a message, under the message's own rowid, its context read from its ancestors' rows.
 * Run it after the message row is written; ancestors indexed first (append order) get their text included.
 */
export function indexMessageStatement(
  sessionId: string,
  id: string,
  text: string,
  withContext: boolean,
  options: { indexedOnly?: boolean } = {},
): SqlStatement {
  // An update of a message the lazily built index does not cover yet writes no row: the next search indexes it.
  const covered =
    options.indexedOnly === true
      ? sql`AND m.rowid <= (SELECT indexed_rowid FROM assistant_fts_state WHERE key = 'messages')`
      : sql``;
  if (!withContext) {
    // A table Cloudflare agents' Sessions API created (no context column). agents re-indexes an updated
    // message under the next free rowid, so the message's own rowid may hold another message's row: then
    // the row takes the next free rowid (NULL), and removal finds it by id.
    return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, content)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM assistant_fts f WHERE f.rowid = m.rowid) THEN NULL ELSE m.rowid END,
      m.id, m.session_id, m.role, ${text}
    FROM assistant_messages m WHERE m.id = ${id} AND m.session_id = ${sessionId} ${covered}`;
  }
  return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, content, context)
    SELECT m.rowid, m.id, m.session_id, m.role, ${text}, ${raw(contextOfM)}
    FROM assistant_messages m WHERE m.id = ${id} AND m.session_id = ${sessionId} ${covered}`;
}

/**
 * The FTS row of the message at `rowid`, written by the lazy indexer (message-index.ts) in rowid order: its
 * ancestors have lower rowids, so they were indexed by an earlier batch or earlier in this one, and its context
 * is read from their rows as at append.
 */
export function indexRowStatement(rowid: number, text: string, withContext: boolean): SqlStatement {
  if (!withContext) {
    // A table Cloudflare agents' Sessions API created: its rowid may hold another message's row (see above).
    return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, content)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM assistant_fts f WHERE f.rowid = m.rowid) THEN NULL ELSE m.rowid END,
      m.id, m.session_id, m.role, ${text}
    FROM assistant_messages m WHERE m.rowid = ${rowid}`;
  }
  return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, content, context)
    SELECT m.rowid, m.id, m.session_id, m.role, ${text}, ${raw(contextOfM)}
    FROM assistant_messages m WHERE m.rowid = ${rowid}`;
}

/**
 * After message `id` changed (its text updated, or it was deleted): the context of its children and
 * grandchildren on every branch is read again from their ancestors' rows. Bounded by the branching below
 * the message; an append never needs it.
 */
export function refreshContextStatements(
  sessionId: string,
  id: string,
  withContext: boolean,
): SqlStatement[] {
  if (!withContext) return [];
  return [
    sql`UPDATE assistant_fts SET context = (
      SELECT ${raw(contextOfM)} FROM assistant_messages m WHERE m.rowid = assistant_fts.rowid)
    WHERE rowid IN (
      SELECT c.rowid FROM assistant_messages c WHERE c.parent_id = ${id} AND c.session_id = ${sessionId}
      UNION ALL
      SELECT g.rowid FROM assistant_messages c
        JOIN assistant_messages g ON g.parent_id = c.id AND g.session_id = c.session_id
        WHERE c.parent_id = ${id} AND c.session_id = ${sessionId})`,
  ];
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
  const withContext = await hasContextColumn(client);
  const expression = fts5MatchExpression(plan, { column: withContext ? ["content", "context"] : "content" });
  // Weights follow the column order: id, session_id, role (unindexed), content, context.
  const rank = raw(withContext ? `bm25(assistant_fts, 0, 0, 0, 1, ${contextWeight})` : "f.rank");
  const sessionId = options.sessionId;
  const inSession = sessionId === undefined ? sql`` : sql`AND f.session_id = ${sessionId}`;
  const rows = await client.run<Row>(sql`
    SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content,
      m.created_at AS created_at
    FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
    WHERE assistant_fts MATCH ${expression} ${inSession}
    ORDER BY ${rank} LIMIT ${limit}`);
  return rows.map((row) => {
    const result: SearchResult = { id: row.id, role: row.role, content: row.content };
    if (row.created_at !== null) result.createdAt = row.created_at;
    if (sessionId === undefined) result.sessionId = row.session_id;
    return result;
  });
}
