import { ContextError } from "@contextblocks/core";
import {
  checkSearchLimit,
  defaultSearchRanking,
  type SearchCandidate,
  type SearchRanking,
} from "@contextblocks/sessions/store-kit";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { limitLiteral, raw, statementShapes } from "@contextblocks/sql/store-kit";
import { fts5MatchExpression, monthNames, planQuery, type QueryPlan } from "@contextblocks/text";
import { searchRowsTable, sessionKeyOf } from "./message-index-schema.js";
import { saysWhen } from "./says-when.js";
import { type CandidateRow, searchInSteps } from "./search-in-steps.js";
import {
  fieldWeights,
  messageColumnsOfM,
  ownScore,
  type SessionTokens,
  saysWhenOfRow,
  searchMatch,
  searchWordsExpression,
  weighsDates,
} from "./search-scores.js";
import type { SessionShare } from "./session-share.js";
import { rowsOf, runSteps, type SqlSteps } from "./sql-steps.js";

/**
 * Message search over `assistant_fts`: what each message's row holds, and how a search ranks them.
 *
 * Contextual indexing (as in Anthropic's "contextual retrieval" and MemMachine's contextualized retrieval),
 * with fields weighed apart as in BM25F:
 * - `content`: the message's own text (weight 1), the only column returned;
 * - `context`: the text of the two turns before it on its own branch (parent, grandparent), weight
 *   `contextWeight` (the weights are a `SearchRanking`, `@contextblocks/sessions/store-kit`). A question's words often sit in the turn that asked, while the answer is the turn after;
 * - `time`: the day the message carries, in words ("8 May 2023"), so "what happened in May 2023" matches;
 * - `speaker` (not a searched column): a hit whose speaker the query names scores `speakerBoost` more;
 * - `says_when` (not searched): whether the message's text says when (`saysWhen`), read by a query that asks
 *   when (`datedBoost`) instead of matching its text at query time;
 * - `parent_row`, `grandparent_row` (not searched): the rowids of those two turns;
 * - `session_key`: its session's token (`sessionKeyOf`), weight 0, ANDed into a one-session search's MATCH.
 *
 * The turns after a message (its replies) count too, but they are not written into its row: when a
 * message's own text matches, it lends `afterShare` of that score to its parent and `afterShare²` to its
 * grandparent, at query time, in the same statement. So a turn whose own words miss but whose replies match
 * still ranks, and a row is written once, when its message is indexed: a later append never rewrites an
 * older row. Hits of a day in which the query's words cluster rank higher (`dayShare`).
 *
 * When rows are written: the lazy indexer (message-index.ts) writes a batch of new messages in rowid order,
 * ancestors first, one row each. An append writes no search row (unless `indexOnAppend`). Updating or
 * deleting a message re-reads the context of its children and grandchildren (`refreshContextStatements`);
 * branches stay apart (a row's context and the rows it lends to are its own path); compaction overlays change
 * no row, so the turns under them stay searchable.
 *
 * The query is words, never FTS5 syntax (`planQuery`): every word and adjacent pair is ORed, ranked by
 * bm25 with the weights above, in one statement. Every match is ranked from the index without reading its
 * row, and only the best `candidatesOf(limit, ranking)` are read and ranked further: sorted by FTS5
 * (`ORDER BY rank`), so the rows a search reads do not grow with the session (about 200 for 10 hits on a
 * Durable Object, search-in-steps.ts), nor with the other sessions of the database (the session's token is in
 * the MATCH: `searchMatch`; left out while the session was last found alone: `SessionShare`), or, where rows read are not billed, by SQLite (`MessageSort`), faster. A turn
 * near the best matches (`nearShare`, `nearTurns`) ranks higher, with or without message times.
 */
export interface MessageSearchOptions {
  limit: number;
  /** The ranking's weights (`defaultSearchRanking` when omitted), checked by `searchRankingOf`. */
  ranking?: SearchRanking | undefined;
  /** One session's messages; omitted: every session's (the manager's cross-session search). */
  sessionId?: string | undefined;
  /** Who sorts the matches (`MessageSort`); default `"rank"`. */
  sort?: MessageSort | undefined;
  /**
   * With a session: whether it was found alone in the index lately, so its search tries the whole index's best
   * first (`sort: "bm25"`; where FTS5 sorts, in steps and with its token: search-in-steps.ts). Omitted: always
   * where SQLite sorts, never where FTS5 does.
   */
  share?: SessionShare | undefined;
  /** With a session: whether its rows carry its token (`SessionTokens`); omitted: no token is used. */
  sessionTokens?: SessionTokens | undefined;
}

/** Turns before a message whose text its row carries as context. */
export const contextTurns = 2;

interface Row extends CandidateRow {
  /** How many of the hits ranked over the whole index are another session's (`"whole"` hits only). */
  strays?: number;
}

/**
 * Whether `assistant_fts` has our `context` column: a table Cloudflare agents' Sessions API created has
 * not (FTS5 tables cannot be altered), and is then searched by message text alone.
 */
const shapes = new WeakMap<SqlClient, boolean>();

export function hasContextColumn(client: SqlClient): Promise<boolean> {
  return runSteps(client, contextColumnSteps(client));
}

/** `hasContextColumn` as steps (sql-steps.ts): the answer found before, or one read. */
export function* contextColumnSteps(client: SqlClient): SqlSteps<boolean> {
  const known = shapes.get(client);
  if (known !== undefined) return known;
  const rows = yield* rowsOf<{ name: string }>(sql`SELECT name FROM pragma_table_info('assistant_fts')`);
  const found = rows.some((row) => row.name === "context");
  shapes.set(client, found);
  return found;
}

/**
 * Which column of `assistant_messages` holds a message's search rowid: `rowid` on the lean and indexed
 * layouts, `seq` on the keyed one (which has no rowid).
 */
export type SearchKey = "rowid" | "seq";

/** The "before" context of the message `m` (an alias of `assistant_messages`): its parent's and grandparent's text. */
function beforeOfM(key: SearchKey): string {
  return `coalesce((SELECT f.content FROM assistant_messages p JOIN assistant_fts f ON f.rowid = p.${key}
    WHERE p.id = m.parent_id AND p.session_id = m.session_id), '')
  || char(10) ||
  coalesce((SELECT f.content FROM assistant_messages p
    JOIN assistant_messages g ON g.id = p.parent_id AND g.session_id = p.session_id
    JOIN assistant_fts f ON f.rowid = g.${key}
    WHERE p.id = m.parent_id AND p.session_id = m.session_id), '')`;
}

/** The search rowid of `m`'s parent on its branch (NULL for a root). */
function parentRowOfM(key: SearchKey): string {
  return `(SELECT p.${key} FROM assistant_messages p WHERE p.id = m.parent_id AND p.session_id = m.session_id)`;
}

/** The search rowid of `m`'s grandparent on its branch (NULL when it has none). */
function grandparentRowOfM(key: SearchKey): string {
  return `(SELECT g.${key} FROM assistant_messages p
    JOIN assistant_messages g ON g.id = p.parent_id AND g.session_id = p.session_id
    WHERE p.id = m.parent_id AND p.session_id = m.session_id)`;
}

const monthCases = monthNames
  .map((month, index) => `WHEN '${String(index + 1).padStart(2, "0")}' THEN '${month}'`)
  .join(" ");

/**
 * The time column of `m`: the day its message carries (`createdAt`, as `dayWords` writes it) when given,
 * else the day its row was written, in the same words ("8 May 2023").
 */
function timeOfM(time: string | null, createdAt: SqlStatement = raw("m.created_at")): SqlStatement {
  return sql`coalesce(${time}, CASE WHEN ${createdAt} IS NULL THEN '' ELSE
    CAST(strftime('%d', ${createdAt}) AS INTEGER) || ' ' || CASE strftime('%m', ${createdAt}) ${raw(monthCases)} END
    || ' ' || strftime('%Y', ${createdAt}) END)`;
}

/** What one message's search row is written from: its text and its fields (`messageFieldsOf`). */
export interface IndexedMessage {
  text: string;
  speaker: string;
  /** The day the message carries, as words; `null`: the day its row was written. */
  time: string | null;
}

/** The search row of the message `m`, with its context and its ancestors' rowids read from their rows. */
function rowOfM(message: IndexedMessage, key: SearchKey = "rowid"): SqlStatement {
  return sql`INSERT INTO assistant_fts
      (rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time, says_when,
        session_key)
    SELECT m.${raw(key)}, m.id, m.session_id, m.role, ${message.speaker}, ${raw(parentRowOfM(key))},
      ${raw(grandparentRowOfM(key))}, ${message.text}, ${raw(beforeOfM(key))}, ${timeOfM(message.time)},
      ${saysWhen(sql`${message.text}`)}, ${sessionKeyOf(raw("m.session_id"))}`;
}

/**
 * The search row of the message `m` in a table Cloudflare agents' Sessions API created (no context column).
 * agents re-indexes an updated message under the next free rowid, so the message's own rowid may hold another
 * message's row: then the row takes the next free rowid (NULL), and removal finds it by id.
 */
function agentsRowOfM(message: IndexedMessage): SqlStatement {
  return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, content)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM assistant_fts f WHERE f.rowid = m.rowid) THEN NULL ELSE m.rowid END,
      m.id, m.session_id, m.role, ${message.text}`;
}

/**
 * The search row of a message on the keyed layout, under its `seq`, written in its append's transaction
 * (for every message: a message without text gets a row with empty text, since the search table holds the
 * order). Writes nothing when the message row is not there with that `seq` (its insert was refused) or the
 * rowid is taken; `afterInsert`: nor when the statement just before (the message's insert) stored nothing.
 */
export function keyedRowStatement(
  sessionId: string,
  id: string,
  message: IndexedMessage,
  options: { afterInsert?: boolean } = {},
): SqlStatement {
  return sql`${rowOfM(message, "seq")}
    FROM assistant_messages m WHERE m.id = ${id} AND m.session_id = ${sessionId}
      AND NOT EXISTS (SELECT 1 FROM assistant_fts f WHERE f.rowid = m.seq)
      ${options.afterInsert === true ? sql`AND changes() = 1` : sql``}`;
}

/** The two turns before a message on its branch, as an append that remembers them knows them. */
export interface KnownContext {
  /** The parent's search rowid (or the expression giving it) and text (`null`/`""` for a root). */
  parentRow: number | null | SqlStatement;
  parentText: string;
  /** The grandparent's (`null`/`""` when there is none). */
  grandparentRow: number | null | SqlStatement;
  grandparentText: string;
}

/**
 * The search row of a message on the keyed layout when its append knows the context (the turns before it
 * are the ones it remembers: keyed-tail.ts): the row `keyedRowStatement` would write, from the values
 * given, so it reads no row. Under the largest rowid + 1 (the `seq` its insert just took), written only
 * when that insert stored its message (`changes()`).
 */
export function keyedRowFromContext(
  sessionId: string,
  id: string,
  role: string,
  message: IndexedMessage,
  createdAt: string | null,
  context: KnownContext,
): SqlStatement {
  // As `beforeOfM` writes it: parent, newline, grandparent.
  const before = `${context.parentText}\n${context.grandparentText}`;
  return sql`INSERT INTO assistant_fts
      (rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time, says_when,
        session_key)
    SELECT (SELECT COALESCE(MAX(rowid), 0) FROM assistant_fts) + 1, ${id}, ${sessionId}, ${role},
      ${message.speaker}, ${context.parentRow}, ${context.grandparentRow}, ${message.text}, ${before},
      ${timeOfM(message.time, sql`COALESCE(${createdAt}, CURRENT_TIMESTAMP)`)}, ${saysWhen(sql`${message.text}`)},
      ${sessionKeyOf(sql`${sessionId}`)}
    WHERE changes() = 1`;
}

/** A keyed message's search row after its text changed: updated in place, so it never leaves the order. */
export function keyedRowUpdateStatement(
  seq: number,
  id: string,
  message: IndexedMessage,
  role: string,
): SqlStatement {
  return sql`UPDATE assistant_fts SET content = ${message.text}, speaker = ${message.speaker}, role = ${role},
    time = (SELECT ${timeOfM(message.time)} FROM assistant_messages m WHERE m.id = ${id}),
    says_when = ${saysWhen(sql`${message.text}`)}
    WHERE rowid = ${seq} AND id = ${id}`;
}

/**
 * The FTS row of a message, under the message's own rowid, its context read from its ancestors' rows. Run
 * it after the message row is written.
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
  return sql`${withContext ? rowOfM(message) : agentsRowOfM(message)}
    FROM assistant_messages m WHERE m.id = ${id} AND m.session_id = ${sessionId} ${covered}`;
}

/**
 * The FTS row of the message at `rowid`, written by the lazy indexer (message-index.ts) in rowid order: its
 * ancestors have lower rowids, so they were indexed by an earlier batch or earlier in this one. `condition`
 * (`AND …` on `m`): written only where it holds.
 */
export function indexRowStatement(
  rowid: number,
  message: IndexedMessage,
  withContext: boolean,
  condition: SqlStatement = sql``,
): SqlStatement {
  return sql`${withContext ? rowOfM(message) : agentsRowOfM(message)}
    FROM assistant_messages m WHERE m.rowid = ${rowid} ${condition}`;
}

/**
 * After message `id` changed (its text updated, or it was deleted): the context of its children and
 * grandchildren on every branch (the turns before them) and the ancestors they lend to (a deleted parent
 * is no one's) are read again. Its parent and
 * grandparent keep their rows: the turns after a message are counted at query time. Bounded by the
 * branching below the message; an append never needs it.
 */
export function refreshContextStatements(
  sessionId: string,
  id: string,
  _parentId: string | null,
  withContext: boolean,
  key: SearchKey = "rowid",
): SqlStatement[] {
  if (!withContext) return [];
  const own =
    key === "rowid"
      ? raw("m.rowid = assistant_fts.rowid")
      : raw("m.id = assistant_fts.id AND m.session_id = assistant_fts.session_id");
  return [
    sql`UPDATE assistant_fts SET (context, parent_row, grandparent_row) = (
      SELECT ${raw(beforeOfM(key))}, ${raw(parentRowOfM(key))}, ${raw(grandparentRowOfM(key))}
      FROM assistant_messages m WHERE ${own})
    WHERE rowid IN (
      SELECT c.${raw(key)} FROM assistant_messages c WHERE c.parent_id = ${id} AND c.session_id = ${sessionId}
      UNION ALL
      SELECT g.${raw(key)} FROM assistant_messages c
        JOIN assistant_messages g ON g.parent_id = c.id AND g.session_id = c.session_id
        WHERE c.parent_id = ${id} AND c.session_id = ${sessionId})`,
  ];
}

/**
 * The candidates of a search, best first, each with its score and whether its own text matched: what
 * `selectSearchHits` (`@contextblocks/sessions/store-kit`) turns into hits. Ask for more than the hits wanted
 * (`candidateCount`), so the cut sees the runners-up.
 */
export function searchMessageIndex(
  client: SqlClient,
  query: string,
  options: MessageSearchOptions,
): Promise<SearchCandidate[]> {
  return runSteps(client, searchSteps(client, query, options));
}

/** Refuses a query that is not a string, naming what it is. */
export function checkSearchQuery(query: unknown): asserts query is string {
  if (typeof query !== "string") {
    throw new ContextError("INVALID_INPUT", `search: the query must be a string, got ${typeof query}`);
  }
}

/** `searchMessageIndex` as steps (sql-steps.ts), for a search that must answer at once. */
export function* searchSteps(
  client: SqlClient,
  query: string,
  options: MessageSearchOptions,
): SqlSteps<SearchCandidate[]> {
  checkSearchQuery(query);
  const limit = checkSearchLimit(options.limit);
  const plan = planQuery(query);
  if (plan === null) return [];
  const withContext = yield* contextColumnSteps(client);
  const sessionId = options.sessionId;
  const inSession = sessionId === undefined ? sql`` : sql`AND f.session_id = ${sessionId}`;
  if (!withContext) {
    // A table Cloudflare agents' Sessions API created: message text alone, FTS5's own bm25.
    const rows = yield* rowsOf<Row>(sql`
      SELECT f.id AS id, f.session_id AS session_id, f.role AS role, f.content AS content,
        ${messageColumnsOfM}, -f.rank AS relevance, 1 AS own_hit
      FROM assistant_fts f JOIN assistant_messages m ON m.id = f.id AND m.session_id = f.session_id
      WHERE assistant_fts MATCH ${fts5MatchExpression(plan, { column: "content" })} ${inSession}
      ORDER BY f.rank LIMIT ${limitLiteral(limit)}`);
    return rows.map((row) => resultOf(row, sessionId));
  }
  const expression = searchWordsExpression(plan);
  const words = JSON.stringify(plan.terms.map((term) => term.word));
  const ranking = options.ranking ?? defaultSearchRanking;
  const candidates = candidatesOf(limit, ranking);
  const sessionTokens = options.sessionTokens;
  const values = { plan, expression, words, ranking, candidates, limit, sessionId, sessionTokens };
  if (options.sort === "bm25" && (sessionId === undefined || options.share?.tryAlone() !== false)) {
    const rows = yield* rowsOf<Row>(searchStatement({ ...values, hits: "whole" }));
    // The whole index's best are this session's (or no session was asked for): the session's own best.
    // Otherwise (or when nothing came back, which cannot tell) the session's rows are ranked apart.
    const first = rows[0];
    if (sessionId === undefined || (first !== undefined && Number(first.strays) === 0)) {
      return rows.map((row) => resultOf(row, sessionId));
    }
    if (first !== undefined) options.share?.notAlone();
  }
  if (options.sort === "bm25") {
    // Where SQLite sorts and the index holds other sessions' rows: the session's own matches, in one statement.
    const rows = yield* rowsOf<Row>(searchStatement({ ...values, hits: "session" }));
    return rows.map((row) => resultOf(row, sessionId));
  }
  if (ordersInSql(ranking)) {
    const rows = yield* rowsOf<Row>(searchStatement({ ...values, hits: "ranked" }));
    return rows.map((row) => resultOf(row, sessionId));
  }
  const best = yield* searchInSteps({ ...values, share: options.share });
  return best.map((row) => resultOf(row, sessionId));
}

/**
 * Whether FTS5's sort (`"rank"`) leaves the candidates' order to SQL: only with the near turns' share, a
 * window by append order; otherwise the search runs in steps (`searchInSteps`), which lend, place and cut in
 * JavaScript on the rows already read: about 3 rows a candidate on a Durable Object against 10.
 */
function ordersInSql(ranking: SearchRanking): boolean {
  return ranking.nearShare > 0;
}

/**
 * Who sorts a search's matches; both give the same candidates in the same order (the same bm25, equal
 * scores in rowid order):
 * - `"rank"` (`ORDER BY rank`): FTS5 scores every match, sorts them all and hands over the best in order, so
 *   only those rows are read: a constant number of rows read, what a Durable Object bills. A session's search
 *   ANDs its token into the MATCH, except while the session was last found alone (`SessionShare`,
 *   search-in-steps.ts).
 * - `"bm25"` (`ORDER BY bm25(...)`): SQLite keeps the best as the matches stream by, without FTS5's second
 *   statement and full sort (about 0.7× the time at 5k-22k messages), but every match is a row read. A
 *   session's search ranks the whole index and checks that the best are the session's (`SessionShare`); when
 *   another session's are among them, it ranks the session's own matches, each match's session read from its
 *   search row first (about 2.5× faster than FTS5's filtered sort with five sessions in the index).
 */
export type MessageSort = "rank" | "bm25";

/** `"bm25"` where the client says rows read are not billed (better-sqlite3), `"rank"` everywhere else. */
export function searchSortOf(client: SqlClient): MessageSort {
  return client.billsRows === false ? "bm25" : "rank";
}

/**
 * The search row at `target` as `f`: read from FTS5's own table where SQLite sorts (`searchRowsTable`), through
 * `assistant_fts` where FTS5 does (the statement a Durable Object runs, whose rows read are counted).
 */
function searchRowAt(hits: HitSource, target: string): SqlStatement {
  return hits !== "ranked"
    ? sql`${searchRowsTable} f ON f.search_rowid = ${raw(target)}`
    : sql`assistant_fts f ON f.rowid = ${raw(target)}`;
}

/**
 * Which statement finds the hits: `"ranked"` FTS5 sorts them (filtered by session); SQLite sorts them over the
 * `"whole"` index, or over the `"session"`'s own matches (each match's session read from its search row by
 * rowid, one b-tree seek, before it is scored: FTS5's filter by session scores and sorts every match first).
 */
type HitSource = "ranked" | "whole" | "session";

interface CandidateValues {
  plan: QueryPlan;
  expression: string;
  words: string;
  ranking: SearchRanking;
  candidates: number;
  limit: number;
  sessionId: string | undefined;
  sessionTokens: SessionTokens | undefined;
  hits: HitSource;
}

/** The search statements by shape: their text is the same from search to search, only the query differs. */
const searchStatements = statementShapes<{
  expression: string;
  words: string;
  sessionId: string | undefined;
}>();

/**
 * `candidatesStatement`, built once per shape (`statementShapes`): its text follows from the ranking's weights,
 * the counts, which hits, whether the query's dates weigh and how a session is found; the query's expression
 * and words and the session's id are bound.
 */
function searchStatement(values: CandidateValues): SqlStatement {
  const { ranking } = values;
  const key = [
    values.hits,
    values.limit,
    values.candidates,
    values.sessionTokens,
    weighsDates(values.plan, ranking),
    ...rankingWeights.map((name) => ranking[name]),
  ].join(" ");
  return searchStatements(
    key,
    { expression: values.expression, words: values.words, sessionId: values.sessionId },
    (bound) => candidatesStatement({ ...values, ...bound }),
  );
}

/** Every weight of a ranking, in one order: each may shape the statement's text. */
const rankingWeights = Object.keys(defaultSearchRanking) as (keyof SearchRanking)[];

/**
 * The statement ranking a search's candidates (its scores: search-scores.ts). bm25 is negative (lower ranks
 * first): the shares lent by the turns after, the speaker's factor and the day's share make a score lower.
 */
function candidatesStatement(values: CandidateValues): SqlStatement {
  const { ranking, sessionId } = values;
  const share = ranking.afterShare;
  const number = (value: number) => raw(String(value));
  const weights = fieldWeights(ranking);
  const own = ownScore;
  // Where SQLite sorts: every match ranked without reading a row, equal scores in rowid order as FTS5 sorts
  // them, then only the best rows read. Over the session's own matches (its token in the MATCH), each match's
  // session is read too (CROSS JOIN keeps the matches the outer loop: each is looked up by rowid, never the
  // other way round): the token finds the rows, the session decides.
  const matches =
    values.hits === "session" && sessionId !== undefined
      ? sql`assistant_fts CROSS JOIN ${searchRowsTable} mine ON mine.search_rowid = assistant_fts.rowid
        WHERE assistant_fts MATCH ${searchMatch(values.expression, sessionId, values.sessionTokens)}
          AND mine.session_id = ${sessionId}`
      : sql`assistant_fts WHERE assistant_fts MATCH ${values.expression}`;
  const hit =
    values.hits === "ranked"
      ? sql`
      SELECT f.rowid AS target, f.parent_row AS parent_row, f.grandparent_row AS grandparent_row,
        f.session_id AS session_id, f.time AS time, f.rank AS score, ${own} AS own
      FROM assistant_fts f
      WHERE assistant_fts MATCH ${searchMatch(values.expression, sessionId, values.sessionTokens)}
        AND f.rank MATCH ${`bm25(${weights})`}
        ${sessionId === undefined ? sql`` : sql`AND f.session_id = ${sessionId}`}
      ORDER BY f.rank LIMIT ${limitLiteral(values.candidates)}`
      : sql`
      SELECT best.target AS target, f.parent_row AS parent_row, f.grandparent_row AS grandparent_row,
        f.session_id AS session_id, f.time AS time, best.score AS score, best.own AS own
      FROM (SELECT assistant_fts.rowid AS target, bm25(assistant_fts, ${raw(weights)}) AS score, ${own} AS own
        FROM ${matches}
        ORDER BY score, target LIMIT ${limitLiteral(values.candidates)}) best
      JOIN ${searchRowAt(values.hits, "best.target")}`;
  return sql`
    WITH hit AS MATERIALIZED (${hit}),
    lent (target, score, own_hit) AS (
      SELECT target, score, own < 0 FROM hit
      UNION ALL
      SELECT parent_row, ${number(share)} * own, 0 FROM hit WHERE parent_row IS NOT NULL AND own < 0
      UNION ALL
      SELECT grandparent_row, ${number(share * share)} * own, 0 FROM hit
        WHERE grandparent_row IS NOT NULL AND own < 0
    ),
    scored AS ${
      // Where SQLite sorts, each candidate's factors are computed once (the day's pass and the cut would
      // compute them again); on a Durable Object the ephemeral table would be rows read (about 40 more).
      values.hits === "ranked" ? raw("") : raw("MATERIALIZED")
    } (
      SELECT ${
        // Where SQLite sorts, the message's id, role and text are read again for the returned candidates
        // only (a seek each): carried through the ephemeral table and both sorts they cost more.
        values.hits === "ranked" ? raw("f.id AS id, f.role AS role, f.content AS content,") : raw("")
      } f.session_id AS session_id, f.time AS time, total.own_hit AS own_hit,
        total.score * CASE WHEN f.speaker IN (SELECT value FROM json_each(${values.words}))
          THEN ${number(1 + ranking.speakerBoost)} ELSE 1 END${datedFactor(values.plan, ranking)} AS score,
        total.target AS row
      FROM (SELECT target, sum(score) AS score, max(own_hit) AS own_hit FROM lent GROUP BY target) total
      JOIN ${searchRowAt(values.hits, "total.target")}
      -- A message without text (the keyed layout gives it an empty row, which holds its place in the
      -- order) is never a hit, as on the layouts that write it no row.
      WHERE f.content <> ''
    )
    ${resultsOf(values)}`;
}

/**
 * The candidates returned with their messages' own columns, best first. Where SQLite sorts, those columns and
 * the search row's id, role and text are read for the returned candidates only. Where FTS5 sorts, only with
 * the near turns' share (the windows and the cut stay in SQL); otherwise that search runs in steps
 * (search-in-steps.ts).
 */
function resultsOf(values: CandidateValues): SqlStatement {
  const { ranking, sessionId } = values;
  if (values.hits === "ranked") {
    return sql`
    SELECT scored.id AS id, scored.session_id AS session_id, scored.role AS role, scored.content AS content,
      ${messageColumnsOfM}, scored.own_hit AS own_hit, -scored.score AS relevance, 0 AS strays
    FROM scored JOIN assistant_messages m ON m.id = scored.id AND m.session_id = scored.session_id
    ORDER BY scored.score${dayAndNear(ranking)}
    LIMIT ${limitLiteral(values.limit)}`;
  }
  // Whether any of the whole index's best is another session's: then the caller ranks the session apart.
  const strays =
    sessionId === undefined || values.hits === "session"
      ? sql`0`
      : sql`(SELECT count(*) FROM hit WHERE hit.session_id IS NOT ${sessionId})`;
  return sql`,
    best AS (${bestOfScored(values)})
    SELECT f.id AS id, best.session_id AS session_id, f.role AS role, f.content AS content,
      ${messageColumnsOfM}, best.own_hit AS own_hit, -best.score AS relevance, ${strays} AS strays
    FROM best JOIN ${searchRowAt(values.hits, "best.row")}
      JOIN assistant_messages m ON m.id = f.id AND m.session_id = best.session_id
    ORDER BY best.place`;
}

/**
 * The best `limit` candidates where SQLite sorts, each with its place (its score with the shares of its day and
 * near turns). With only the day's share (the default), the day's best score is a GROUP BY joined back, which
 * costs SQLite less than the window `dayAndNear` writes; equal places keep the window's order (by session,
 * day, rowid), so the candidates and their order are the same either way.
 */
function bestOfScored(values: CandidateValues): SqlStatement {
  const { ranking } = values;
  const limit = limitLiteral(values.limit);
  if (ranking.dayShare <= 0 || ranking.nearShare > 0) {
    return sql`
      SELECT row, session_id, own_hit, score, scored.score${dayAndNear(ranking)} AS place
      FROM scored ORDER BY place LIMIT ${limit}`;
  }
  return sql`
      SELECT scored.row AS row, scored.session_id AS session_id, scored.own_hit AS own_hit, scored.score AS score,
        scored.score + ${raw(String(ranking.dayShare))} * day.best AS place
      FROM scored JOIN (SELECT session_id, time, min(score) AS best FROM scored GROUP BY session_id, time) day
        ON day.session_id IS scored.session_id AND day.time IS scored.time
      ORDER BY place, scored.session_id, scored.time, scored.row LIMIT ${limit}`;
}

/**
 * The factor of a message whose own text says when (`saysWhen`), for a query that asks when (`datedBoost`);
 * nothing for any other query, or with a weight of 0.
 */
function datedFactor(plan: QueryPlan, ranking: SearchRanking): SqlStatement {
  if (!weighsDates(plan, ranking)) return sql``;
  return sql` * CASE WHEN ${saysWhenOfRow} THEN ${raw(String(1 + ranking.datedBoost))} ELSE 1 END`;
}

/**
 * The shares of the best score of a hit's day and of the turns near it, each a window over the candidates
 * (left out when its weight is 0: each window is a pass over them, rows read on a Durable Object). The near
 * turns' share applies when the candidates are all of one day (`nearShare`).
 */
function dayAndNear(ranking: SearchRanking): SqlStatement {
  const day =
    ranking.dayShare > 0
      ? sql` + ${raw(String(ranking.dayShare))} * min(scored.score) OVER (PARTITION BY scored.session_id, scored.time)`
      : sql``;
  // The near turns count only when the candidates are all of one day: the day tells where a conversation
  // dwelt when its messages carry times, the order of its turns when they do not. Read from `hit` (already
  // read, about 40 rows): a window of its own would read more rows on a Durable Object.
  const near =
    ranking.nearShare > 0
      ? sql` + CASE WHEN (SELECT min(hit.time) = max(hit.time) FROM hit)
          THEN ${raw(String(ranking.nearShare))} * min(scored.score) OVER (PARTITION BY scored.session_id
            ORDER BY scored.row RANGE BETWEEN ${raw(String(ranking.nearTurns))} PRECEDING
            AND ${raw(String(ranking.nearTurns))} FOLLOWING)
          ELSE 0 END`
      : sql``;
  return sql`${day}${near}`;
}

/**
 * How many of the best matches by bm25 a search ranks further (lending, speaker, day, near turns): the
 * candidates asked for and `extraCandidates` more (a ranking setting), so a turn the lending lifts still has
 * its matches counted. A bound on the rows a search reads whatever the number of matches (a Durable Object
 * bills each; FTS5 ranks every match from its index without reading rows).
 */
export function candidatesOf(limit: number, ranking: SearchRanking): number {
  return limit + ranking.extraCandidates;
}

function resultOf(row: Row, sessionId: string | undefined): SearchCandidate {
  const result: SearchCandidate = {
    id: row.id,
    role: row.role,
    text: row.content,
    createdAt: row.created_at,
    score: Number(row.relevance),
    matchedBy: Number(row.own_hit) === 1 ? "text" : "neighbours",
    parentId: row.parent_id,
    grandparentId: row.grandparent_id,
  };
  if (sessionId === undefined) result.sessionId = row.session_id;
  return result;
}
