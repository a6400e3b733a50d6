import { wellFormedPrefix } from "@contextblocks/core/store-kit";
import { type SqlClient, type SqlStatement, type SqlValue, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { fts5MatchExpression, planQuery, writtenText } from "@contextblocks/text";
import { excerpt } from "./excerpt.js";
import { keyHandle } from "./handle.js";
import { planPairs, rankWithPairs } from "./pair-bonus.js";
import { bm25Weights, indexTable, rankFunction } from "./schema.js";
import type { ScopePlacement } from "./scope-share.js";

/**
 * A search in one scope: one statement.
 *
 * 1. Plan the query (`planQuery` of `@contextblocks/text`): words, stopwords left out, every word quoted.
 * 2. One SELECT: FTS5 ranks the matches by bm25 over the query's words with column weights (key 2,
 *    content 1, context 0.3; rankFunction in schema.ts), sorted by FTS5 itself (`ORDER BY rank`) or by SQLite
 *    (`ORDER BY bm25(...)`; see `SearchSort` for which and why); a plain `scope = ?` on the ranked rows skips
 *    other labels' and namespaces' entries, or, when the label is a small part of the index, its token is
 *    part of the MATCH (scope-share.ts, read once per 16 searches). No statistics statement. When the query
 *    has adjacent pairs (three terms or more), twice `limit` candidates come back and the pairs found as
 *    written in them re-rank them (pair-bonus.ts): cheaper than FTS5 scoring the pairs as phrases.
 * 3. Each result is the entry whole when it is short, else a window around the matched words (excerpt.ts),
 *    with `…` where it was cut. The query that is exactly a key without spaces (`c-tips`, or
 *    `[c-tips]` as a result shows it) also matches that entry's handle, which ranks first and comes back whole: how a model
 *    reads all of an entry it saw an excerpt of.
 * 4. Results are kept best first while they fit the per-call budget (at least one).
 */

export interface Match {
  readonly key: string;
  /**
   * The entry's content, or an excerpt of it (cut where `…` stands); `null` for a weak match returned as its
   * key alone (`weakResultTokens` 0).
   */
  readonly text: string | null;
}

/**
 * Who sorts the matches. Both give the same results in the same order (the same bm25 with the same weights);
 * they differ in what they cost:
 * - `"rank"` (`ORDER BY rank`): FTS5 scores every match and sorts them itself, then hands over only the first
 *   `limit` rows, so a search reads about `limit` rows at any index size: what a Durable Object bills.
 * - `"bm25"` (`ORDER BY bm25(...)`): SQLite keeps the best `limit` as the matches stream by. About 0.5× the
 *   bare statement's time less than `"rank"` at 20k entries (FTS5 runs a second statement and sorts every
 *   match in full), but every match is a row read, billed on a Durable Object (5,289 a search at 10k entries).
 */
export type SearchSort = "rank" | "bm25";

export interface SearchSettings {
  /** Matches returned at most. */
  readonly limit: number;
  /** Who sorts the matches (`SearchSort`). */
  readonly sort: SearchSort;
  /** Whether keys are searched along with contents. */
  readonly searchKeys: boolean;
  /** Estimated tokens one result may take before it becomes an excerpt. */
  readonly resultTokens: number;
  /** Estimated tokens all results of one call may take (the first result is always returned). */
  readonly searchTokens: number;
  /** How FTS5 is restricted to the scope (scope-share.ts). */
  readonly placement: ScopePlacement;
  /** Results scoring below this share of the best result's bm25 come back as their key alone. */
  readonly keyOnlyBelow: number;
  /** Estimated tokens of excerpt a result below `keyOnlyBelow` keeps; 0: its key alone. */
  readonly weakResultTokens: number;
  /** Results scoring below this share of the best result's bm25 are left out. */
  readonly dropBelow: number;
  /** Told when a scope searched as `"alone"` was found to share the index. */
  readonly notAlone?: () => void;
}

/** Characters of an excerpt per token of budget: English takes about 4 a token; the estimate then checks. */
const charactersPerToken = 3.5;

export async function runSearch(
  client: SqlClient,
  scope: number,
  query: string,
  settings: SearchSettings,
): Promise<Match[]> {
  const {
    limit,
    sort,
    searchKeys,
    resultTokens,
    searchTokens,
    placement,
    keyOnlyBelow,
    weakResultTokens,
    dropBelow,
  } = settings;
  const key = keyOf(query);
  const plan = planQuery(query);
  if (plan === null && key === null) return [];
  const clauses: string[] = [];
  if (plan !== null) {
    clauses.push(
      // The pairs are looked for in the candidates (pair-bonus.ts), not sent to FTS5.
      fts5MatchExpression(plan.pairs.length === 0 ? plan : { ...plan, pairs: [] }, {
        column: searchKeys ? ["key", "content", "context"] : ["content", "context"],
      }),
    );
  }
  if (key !== null) clauses.push(`handle : ${keyHandle(scope, key)}`);
  const words = clauses.join(" OR ");
  const rankValues = sort === "rank" ? [rankFunction(searchKeys)] : [];
  const pairs = planPairs(plan);
  const candidates = pairs.length > 0 ? limit * 2 : limit;
  let rows: RankedRow[] | undefined;
  if (placement === "alone") {
    rows = await client.run<RankedRow>(
      withValues(rankedStatement(candidates, false, sort, searchKeys), [words, ...rankValues]),
    );
    if (rows.some((row) => Number(row.scope) !== scope)) {
      // Another label wrote since the share was read: search again with the filter.
      rows = undefined;
      settings.notAlone?.();
    }
  }
  if (rows === undefined) {
    const expression = placement === "small" ? `scope : ${scope} AND (${words})` : words;
    rows = await client.run<RankedRow>(
      withValues(rankedStatement(candidates, true, sort, searchKeys), [expression, ...rankValues, scope]),
    );
  }
  const terms = plan?.terms ?? [];
  if (pairs.length > 0) rows = rankWithPairs(rows, pairs, terms.length, searchKeys, limit);
  const matches: Match[] = [];
  // bm25 as FTS5 gives it is negative (lower is better); a share of the best is score / best. The entry a
  // query names by its key is left out of the best: its handle's weight puts it far above any other.
  const best = Number(rows.find((row) => String(row.key) !== key)?.score);
  const relative = best < 0 ? (row: RankedRow) => Number(row.score) / best : () => 1;
  let spent = 0;
  for (const row of rows) {
    const entryKey = String(row.key);
    const requested = entryKey === key;
    const share = relative(row);
    if (!requested && share < dropBelow) break;
    let text: string | null = null;
    if (requested || share >= keyOnlyBelow) {
      // The row holds the words of the content in a compatibility form after it (`searchableText`): not returned.
      const content = writtenText(String(row.content));
      text = requested ? content : excerpt(content, terms, resultTokens * charactersPerToken);
      // A word of `unicode61` can be long (a CJK sentence has no spaces): the estimate has the last word.
      const budget = requested ? searchTokens : resultTokens;
      if (approximateTokens(text) > budget) text = cutToTokens(text, budget);
    } else if (weakResultTokens > 0) {
      text = excerpt(writtenText(String(row.content)), terms, weakResultTokens * charactersPerToken);
      if (approximateTokens(text) > weakResultTokens) text = cutToTokens(text, weakResultTokens);
    }
    const cost = approximateTokens(entryKey) + (text === null ? 0 : approximateTokens(text)) + 2;
    if (matches.length > 0 && spent + cost > searchTokens) break;
    spent += cost;
    matches.push({ key: entryKey, text });
  }
  return matches;
}

interface RankedRow {
  key: unknown;
  content: unknown;
  /** Never returned; read for the pairs (pair-bonus.ts). */
  context: unknown;
  scope: unknown;
  /** bm25 as FTS5 gives it: negative, lower is better. */
  score: unknown;
}

/**
 * The best `limit` matches, by the weighted bm25 (`rankFunction`), sorted as `sort` says (`SearchSort`).
 * `"rank"` binds the rank function (`rank MATCH ?`); `"bm25"` writes the weights into the statement (constants
 * of schema.ts) and sorts rowids and scores alone, then reads the columns of the best `limit` (reading every
 * match's key and content into the sort cost a tenth of the bare statement at 20k entries). `scoped` adds the `scope = ?` filter, which reads each match's row before the limit (as much
 * again as the bare statement at 20k entries): a scope that holds the whole index searches without it and the
 * caller checks each row's scope. The limit is written into the statement (a validated integer): bound, it
 * cost 10% more. Ties keep rowid order under either sort.
 */
function rankedStatement(
  limit: number,
  scoped: boolean,
  sort: SearchSort,
  searchKeys: boolean,
): SqlStatement {
  const shape = `${scoped}:${limit}:${sort}:${searchKeys}`;
  let statement = rankedStatements.get(shape);
  if (statement === undefined) {
    const table = raw(indexTable);
    const filter = scoped ? sql` AND scope = ${0}` : sql``;
    statement =
      sort === "rank"
        ? sql`
      SELECT key, content, context, scope, rank AS score FROM ${table}
      WHERE ${table} MATCH ${""} AND rank MATCH ${""}${filter}
      ORDER BY rank LIMIT ${raw(String(limit))}`
        : sql`
      WITH best AS (
        SELECT rowid AS id, bm25(${table}, ${raw(bm25Weights(searchKeys))}) AS score FROM ${table}
        WHERE ${table} MATCH ${""}${filter} ORDER BY score, rowid LIMIT ${raw(String(limit))})
      SELECT entry.key, entry.content, entry.context, entry.scope, best.score FROM best
        JOIN ${table} AS entry ON entry.rowid = best.id
      ORDER BY best.score, best.id`;
    if (rankedStatements.size >= maximumShapes) rankedStatements.clear();
    rankedStatements.set(shape, statement);
  }
  return statement;
}

/*
 * Search statements are built once per shape (limit, filter, sort, keys searched) and then given each search's values: a
 * statement spliced from fragments gets new parts each time, so its text would be joined again and looked up
 * by content on every search; kept parts let the client find the text (and the prepared statement) by
 * identity. At most a few shapes exist per process; the cache is bounded all the same.
 */
const rankedStatements = new Map<string, SqlStatement>();
const maximumShapes = 64;

/** A built statement's parts with other values in the same places. */
function withValues(statement: SqlStatement, values: readonly SqlValue[]): SqlStatement {
  if (values.length !== statement.values.length) {
    throw new TypeError(`search: expected ${statement.values.length} values, got ${values.length}`);
  }
  return Object.freeze({ strings: statement.strings, values: Object.freeze([...values]) });
}

/**
 * The key a query names when it may be one: a single run of non-space characters (at most 512), brackets of a
 * result removed. A question (it has spaces) adds no handle look-up to its search.
 */
function keyOf(query: string): string | null {
  const trimmed = query.trim();
  if (trimmed.length === 0 || trimmed.length > 512 || /\s/.test(trimmed)) return null;
  const bracketed = /^\[([^\n\]]+)\]$/.exec(trimmed);
  return bracketed?.[1] ?? trimmed;
}

/** The start of a text cut to about `tokens` estimated tokens, ending with `…`. */
function cutToTokens(text: string, tokens: number): string {
  const end = Math.floor((text.length * tokens) / Math.max(1, approximateTokens(text)));
  return `${wellFormedPrefix(text, Math.max(1, end)).trimEnd()}…`;
}

/**
 * Tokens of a text, estimated cheaply for the budgets: a quarter token per ASCII character (English and code
 * run at about 4 characters a token) and one per other UTF-16 unit (CJK is about one a character; accented
 * Latin and Cyrillic come out high, so their results are cut early rather than late). Core's
 * `estimateTokens` is closer but cost more than the SQL statement itself at 10 results a search.
 */
export function approximateTokens(text: string): number {
  // Most text is all ASCII: one native scan says so.
  if (!nonAscii.test(text)) return Math.ceil(text.length / 4);
  let ascii = 0;
  let other = 0;
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

const nonAscii = /[^\x00-\x7f]/;
