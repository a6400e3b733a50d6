import { ContextError } from "@contextblocks/core";
import type { SearchResult } from "@contextblocks/sessions";
import { raw, type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { fts5MatchExpression, planQuery } from "@contextblocks/text";

/**
 * Message search over `assistant_fts`: what each message's row holds, and how a search ranks them.
 *
 * Contextual indexing (as in Anthropic's "contextual retrieval" and MemMachine's contextualized retrieval),
 * with fields weighed apart as in BM25F:
 * - `content`: the message's own text (weight 1), the only column returned;
 * - `context`: the text of the two turns before it on its own branch (parent, grandparent) and of the two
 *   after it (its first child and that child's first child: the branch it was first answered on), weight
 *   `contextWeight`. A question's words often sit in the turn that asked or in the reply, while the answer is
 *   the turn between;
 * - `time`: the day the message carries, in words ("8 May 2023"), so "what happened in May 2023" matches;
 * - `speaker` (not a searched column): a hit whose speaker the query names scores `speakerBoost` more.
 * Hits of a day in which the query's words cluster rank higher (`dayShare`).
 *
 * When rows are written: the lazy indexer (message-index.ts) writes a batch of new messages in rowid order,
 * ancestors first, each row's "after" context taken from the batch; then the rows of the batch's parents and
 * grandparents written before it read their context again (`refreshAncestorsStatement`): at most two older
 * rows per message indexed, never the rest of the conversation. An append writes no search row (unless
 * `indexOnAppend`). Updating or deleting a message re-reads the context of its children, grandchildren,
 * parent and grandparent (`refreshContextStatements`); branches stay apart (a row's context is its own
 * path); compaction overlays change no row, so the turns under them stay searchable.
 *
 * The query is words, never FTS5 syntax (`planQuery`): every word and adjacent pair is ORed, ranked by
 * bm25 with the weights above, in one statement.
 */
export interface MessageSearchOptions {
  limit: number;
  /** One session's messages; omitted: every session's (the manager's cross-session search). */
  sessionId?: string | undefined;
}

export const maximumSearchLimit = 1_000;

/** Turns on each side whose text a message's row carries as context. */
export const contextTurns = 2;

/** bm25 weight of the context column against 1 for the message's own text. */
export const contextWeight = 0.3;

/** bm25 weight of the time column (the message's day in words: "8 May 2023"). */
export const timeWeight = 1;

/** A message whose speaker the query names scores this much more (1.25×). */
export const speakerBoost = 0.25;

/**
 * Share of the best score of the same day (in the same session) added to each hit's own: a conversation
 * talks about a thing over several turns of one day, so a turn on the day the query's words cluster ranks
 * above a lone match on another day. A session held in one day shifts every hit alike and keeps its order.
 */
export const dayShare = 0.4;

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

/** The text of the FTS row at `rowid` (an SQL expression), or '' when the message has none. */
function indexedText(rowid: string): string {
  return `coalesce((SELECT f.content FROM assistant_fts f WHERE f.rowid = ${rowid}), '')`;
}

/**
 * The rowid of the first child (lowest rowid) of the message with id `id` (an SQL expression) in m's session.
 * A child is stored after its parent, so the search walks forward from m's row: a new database keeps no
 * parent index (an append writes 2 rows), and the next row of the session is usually the child.
 */
function firstChild(id: string, alias: string): string {
  return `(SELECT ${alias}.rowid FROM assistant_messages ${alias} WHERE ${alias}.rowid > m.rowid
    AND ${alias}.parent_id = ${id} AND ${alias}.session_id = m.session_id ORDER BY ${alias}.rowid LIMIT 1)`;
}

/** The "before" context of the message `m` (an alias of `assistant_messages`): its parent's and grandparent's text. */
const beforeOfM = `coalesce((SELECT f.content FROM assistant_messages p JOIN assistant_fts f ON f.rowid = p.rowid
    WHERE p.id = m.parent_id AND p.session_id = m.session_id), '')
  || char(10) ||
  coalesce((SELECT f.content FROM assistant_messages p
    JOIN assistant_messages g ON g.id = p.parent_id AND g.session_id = p.session_id
    JOIN assistant_fts f ON f.rowid = g.rowid
    WHERE p.id = m.parent_id AND p.session_id = m.session_id), '')`;

/**
 * The "after" context of `m`, read from the index: the text of its first child (the branch it was first
 * answered on) and of that child's first child, when they are indexed.
 */
const afterOfM = `${indexedText(firstChild("m.id", "c"))} || char(10) ||
  ${indexedText(`(SELECT d.rowid FROM assistant_messages d WHERE d.rowid > m.rowid AND d.parent_id = (
    SELECT c.id FROM assistant_messages c WHERE c.rowid > m.rowid AND c.parent_id = m.id
      AND c.session_id = m.session_id ORDER BY c.rowid LIMIT 1)
    AND d.session_id = m.session_id ORDER BY d.rowid LIMIT 1)`)}`;

/** The whole context of `m`: the turns before it and after it on its branch, as the index holds them. */
const contextOfM = `${beforeOfM} || char(10) || ${afterOfM}`;

const monthCases = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
]
  .map((month, index) => `WHEN '${String(index + 1).padStart(2, "0")}' THEN '${month}'`)
  .join(" ");

/**
 * The time column of `m`: the day its message carries (`createdAt`, as `dayWords` writes it) when given,
 * else the day its row was written, in the same words ("8 May 2023").
 */
function timeOfM(time: string | null): SqlStatement {
  return sql`coalesce(${time}, CASE WHEN m.created_at IS NULL THEN '' ELSE
    CAST(strftime('%d', m.created_at) AS INTEGER) || ' ' || CASE strftime('%m', m.created_at) ${raw(monthCases)} END
    || ' ' || strftime('%Y', m.created_at) END)`;
}

/** What one message's search row is written from: its text and its fields (`messageFieldsOf`). */
export interface IndexedMessage {
  text: string;
  speaker: string;
  /** The day the message carries, as words; `null`: the day its row was written. */
  time: string | null;
}

/**
 * The FTS row of a message, under the message's own rowid, its context read from its neighbours' rows.
 * Run it after the message row is written; an appended message has no child yet, so only the turns before
 * it are in its context until the lazy indexer's next batch refreshes it (`refreshAncestorsStatement`).
 */
export function indexMessageStatement(
  sessionId: string,
  id: string,
  message: IndexedMessage,
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
      m.id, m.session_id, m.role, ${message.text}
    FROM assistant_messages m WHERE m.id = ${id} AND m.session_id = ${sessionId} ${covered}`;
  }
  return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, speaker, content, context, time)
    SELECT m.rowid, m.id, m.session_id, m.role, ${message.speaker}, ${message.text}, ${raw(contextOfM)},
      ${timeOfM(message.time)}
    FROM assistant_messages m WHERE m.id = ${id} AND m.session_id = ${sessionId} ${covered}`;
}

/**
 * The FTS row of the message at `rowid`, written by the lazy indexer (message-index.ts) in rowid order: its
 * ancestors have lower rowids, so they were indexed by an earlier batch or earlier in this one, and the turns
 * before it are read from their rows. The turns after it in the same batch are not indexed yet: the indexer
 * passes their text (`after`), read from the batch itself.
 */
export function indexRowStatement(
  rowid: number,
  message: IndexedMessage,
  after: string,
  withContext: boolean,
): SqlStatement {
  if (!withContext) {
    // A table Cloudflare agents' Sessions API created: its rowid may hold another message's row (see above).
    return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, content)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM assistant_fts f WHERE f.rowid = m.rowid) THEN NULL ELSE m.rowid END,
      m.id, m.session_id, m.role, ${message.text}
    FROM assistant_messages m WHERE m.rowid = ${rowid}`;
  }
  return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, speaker, content, context, time)
    SELECT m.rowid, m.id, m.session_id, m.role, ${message.speaker}, ${message.text},
      ${raw(beforeOfM)} || char(10) || ${after}, ${timeOfM(message.time)}
    FROM assistant_messages m WHERE m.rowid = ${rowid}`;
}

/**
 * After the lazy indexer wrote the rows of the messages with rowids in (`from`, `to`]: the parents and
 * grandparents of those messages that were indexed before (rowid ≤ `from`) read their context again, so the
 * turns after them are in it. At most two older rows per message indexed, whatever the conversation's length;
 * in a conversation appended in order, the two rows before the batch.
 */
export function refreshAncestorsStatement(from: number, to: number): SqlStatement {
  return sql`UPDATE assistant_fts SET context = (
      SELECT ${raw(contextOfM)} FROM assistant_messages m WHERE m.rowid = assistant_fts.rowid)
    WHERE rowid IN (
      SELECT p.rowid FROM assistant_messages b
        JOIN assistant_messages p ON p.id = b.parent_id AND p.session_id = b.session_id
        WHERE b.rowid > ${from} AND b.rowid <= ${to} AND p.rowid <= ${from}
      UNION
      SELECT g.rowid FROM assistant_messages b
        JOIN assistant_messages p ON p.id = b.parent_id AND p.session_id = b.session_id
        JOIN assistant_messages g ON g.id = p.parent_id AND g.session_id = p.session_id
        WHERE b.rowid > ${from} AND b.rowid <= ${to} AND g.rowid <= ${from})`;
}

/**
 * After message `id` changed (its text updated, or it was deleted): the context of its children and
 * grandchildren on every branch (the turns before them) and of its parent and grandparent (the turns after
 * them) is read again from the index. Bounded by the branching around the message; an append never needs it.
 */
export function refreshContextStatements(
  sessionId: string,
  id: string,
  parentId: string | null,
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
        WHERE c.parent_id = ${id} AND c.session_id = ${sessionId}
      UNION ALL
      SELECT p.rowid FROM assistant_messages p WHERE p.id = ${parentId} AND p.session_id = ${sessionId}
      UNION ALL
      SELECT g.rowid FROM assistant_messages p
        JOIN assistant_messages g ON g.id = p.parent_id AND g.session_id = p.session_id
        WHERE p.id = ${parentId} AND p.session_id = ${sessionId})`,
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
  const sessionId = options.sessionId;
  const inSession = sessionId === undefined ? sql`` : sql`AND f.session_id = ${sessionId}`;
  if (!withContext) {
    // A table Cloudflare agents' Sessions API created: message text alone, FTS5's own bm25.
    const rows = await client.run<Row>(sql`
      SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content,
        m.created_at AS created_at
      FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
      WHERE assistant_fts MATCH ${fts5MatchExpression(plan, { column: "content" })} ${inSession}
      ORDER BY f.rank LIMIT ${limit}`);
    return rows.map((row) => resultOf(row, sessionId));
  }
  const expression = fts5MatchExpression(plan, { column: ["content", "context", "time"] });
  const words = JSON.stringify(plan.terms.map((term) => term.word));
  // bm25 weights follow the column order: id, session_id, role, speaker (unindexed), content, context, time.
  // bm25 is negative (lower ranks first): the speaker's factor and the day's share make a score lower.
  const rows = await client.run<Row>(sql`
    WITH hit AS (
      SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content, f.time AS time,
        bm25(assistant_fts, 0, 0, 0, 0, 1, ${raw(String(contextWeight))}, ${raw(String(timeWeight))})
          * CASE WHEN f.speaker IN (SELECT value FROM json_each(${words}))
            THEN ${raw(String(1 + speakerBoost))} ELSE 1 END AS score
      FROM assistant_fts f
      WHERE assistant_fts MATCH ${expression} ${inSession}
    )
    SELECT hit.id AS id, hit.session_id AS session_id, hit.role AS role, hit.content AS content,
      m.created_at AS created_at
    FROM hit JOIN assistant_messages m ON m.id = hit.id AND m.session_id = hit.session_id
    ORDER BY hit.score + ${raw(String(dayShare))} * min(hit.score) OVER (PARTITION BY hit.session_id, hit.time)
    LIMIT ${limit}`);
  return rows.map((row) => resultOf(row, sessionId));
}

function resultOf(row: Row, sessionId: string | undefined): SearchResult {
  const result: SearchResult = { id: row.id, role: row.role, content: row.content };
  if (row.created_at !== null) result.createdAt = row.created_at;
  if (sessionId === undefined) result.sessionId = row.session_id;
  return result;
}
