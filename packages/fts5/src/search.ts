import { join, raw, type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { matchExpression, planQuery, type QueryPlan, type QueryTerm } from "./query.js";
import { type Candidate, inverseDocumentFrequency, rerank } from "./rank.js";
import { indexDataTable, indexTable, rankFunction, scopesTable, termsTable } from "./schema.js";

/**
 * A search in one scope:
 *
 * 1. Plan the query (query.ts): words, stopwords left out, adjacent pairs, the whole phrase.
 * 2. One statement reads the index size, the scope's size and how many entries contain each term
 *    (`fts5vocab`, one row per term), a few rows whatever the size of the index. Terms in more than half of the index ("very common": bm25 gives them
 *    no weight anyway) are left out of the first pass, so they neither flood the candidates nor make FTS5
 *    walk their long posting lists.
 * 3. Ask FTS5 for the best candidates by bm25 (`ORDER BY rank`, which FTS5 sorts itself), a few times more
 *    than the limit. If that finds fewer than the limit and common terms were left out, a second pass with
 *    every term fills the remaining places.
 * 4. Re-rank the candidates (rank.ts) and keep the limit.
 *
 * Restricting FTS5 to the scope: when the scope holds less than half of the index, its token is part of the
 * MATCH (`scope : 17 AND ...`), so FTS5 returns only the scope's rows and a search reads no more rows than it
 * ranks. When it holds most of the index (one knowledge base per database, the usual case) intersecting with
 * the scope's posting list, which lists nearly every entry, costs more than it saves, and a plain
 * `scope = ?` check on the ranked rows skips the few rows of other scopes. Both give the same results.
 */

export interface Match {
  readonly key: string;
  readonly content: string;
}

export interface SearchSettings {
  /** Matches returned at most. */
  readonly limit: number;
  /** Whether keys are searched along with contents. */
  readonly searchKeys: boolean;
}

/** Candidates fetched from FTS5 per result returned (at least `minimumCandidates`). */
const candidatesPerResult = 3;
const minimumCandidates = 30;
/** Below this many entries in the database, document frequencies are too noisy to leave terms out. */
const minimumDocumentsForCommonTerms = 8;

export async function runSearch(
  client: SqlClient,
  scope: number,
  query: string,
  settings: SearchSettings,
): Promise<Match[]> {
  const { limit, searchKeys } = settings;
  const plan = planQuery(query);
  if (plan === null) return [];
  const statistics = await readStatistics(client, scope, plan.terms);
  if (statistics.scopeEntries === 0) return [];

  const weights = new Map<string, number>();
  const common = new Set<string>();
  for (const term of plan.terms) {
    const frequency = statistics.frequencies.get(term.stem) ?? 0;
    weights.set(term.stem, inverseDocumentFrequency(frequency, statistics.documents));
    if (statistics.documents >= minimumDocumentsForCommonTerms && frequency * 2 > statistics.documents) {
      common.add(term.stem);
    }
  }
  // Never leave out everything: a query of only common words searches for them.
  if (common.size === plan.terms.length) common.clear();

  const fetch = {
    client,
    scope,
    scopeInMatch: statistics.scopeEntries * 2 < statistics.documents,
    wanted: Math.max(limit * candidatesPerResult, minimumCandidates),
    searchKeys,
  };
  const focused = common.size > 0 ? withoutTerms(plan, common) : plan;
  let candidates = await fetchCandidates(fetch, focused);
  if (candidates.length < limit && focused !== plan) {
    const seen = new Set(candidates.map((candidate) => candidate.key));
    const more = await fetchCandidates(fetch, plan);
    candidates = candidates.concat(more.filter((candidate) => !seen.has(candidate.key)));
  }
  return rerank(candidates, plan, weights, searchKeys)
    .slice(0, limit)
    .map(({ key, content }) => ({ key, content }));
}

function withoutTerms(plan: QueryPlan, left: ReadonlySet<string>): QueryPlan {
  return {
    terms: plan.terms.filter((term) => !left.has(term.stem)),
    pairs: plan.pairs.filter(([first, second]) => !left.has(first.stem) || !left.has(second.stem)),
    phrase: plan.phrase,
  };
}

interface Fetch {
  readonly client: SqlClient;
  readonly scope: number;
  readonly scopeInMatch: boolean;
  readonly wanted: number;
  readonly searchKeys: boolean;
}

async function fetchCandidates(fetch: Fetch, plan: QueryPlan): Promise<Candidate[]> {
  const { client, scope, scopeInMatch, wanted, searchKeys } = fetch;
  const expression = matchExpression(scopeInMatch ? scope : null, plan, searchKeys);
  const rows = await client.run<{ key: unknown; content: unknown; rank: unknown }>(sql`
    SELECT key, content, rank FROM ${raw(indexTable)}
    WHERE ${raw(indexTable)} MATCH ${expression} AND rank MATCH ${rankFunction(searchKeys)}
      AND scope = ${scope}
    ORDER BY rank LIMIT ${wanted}`);
  return rows.map((row) => ({ key: String(row.key), content: String(row.content), rank: Number(row.rank) }));
}

interface Statistics {
  /** Entries in the whole index (all scopes), as `fts5vocab` counts frequencies over the whole index. */
  readonly documents: number;
  /** Entries in the scope searched. */
  readonly scopeEntries: number;
  /** Entries whose content contains the stem. */
  readonly frequencies: ReadonlyMap<string, number>;
}

/**
 * One statement, a few rows: the number of entries in the whole index (from FTS5's own "averages" record,
 * row 1 of its `_data` table, which starts with that number as a varint, so reading it costs one row however
 * many labels and namespaces share the database), the scope's size, and each term's document frequency.
 */
async function readStatistics(
  client: SqlClient,
  scope: number,
  terms: readonly QueryTerm[],
): Promise<Statistics> {
  const rows = await client.run<{ kind: unknown; term: unknown; value: unknown }>(sql`
    SELECT 'documents' AS kind, NULL AS term, block AS value FROM ${raw(indexDataTable)} WHERE id = 1
    UNION ALL
    SELECT 'scope', NULL, entries FROM ${raw(scopesTable)} WHERE id = ${scope}
    UNION ALL
    SELECT 'term', term, doc FROM ${raw(termsTable)}
      WHERE col = 'content' AND term IN (${list(terms.map((term) => term.stem))})`);
  let documents: number | undefined;
  let scopeEntries = 0;
  const frequencies = new Map<string, number>();
  for (const row of rows) {
    if (row.kind === "documents") documents = leadingVarint(row.value);
    else if (row.kind === "scope") scopeEntries = Number(row.value);
    else frequencies.set(String(row.term), Number(row.value));
  }
  if (documents === undefined) {
    // Not readable as expected: count from the scope rows instead (one row per label and namespace).
    const [total] = await client.run<{ documents: unknown }>(
      sql`SELECT total(entries) AS documents FROM ${raw(scopesTable)}`,
    );
    documents = Number(total?.documents ?? 0);
  }
  return { documents, scopeEntries, frequencies };
}

/**
 * The first SQLite varint of a blob (big-endian groups of 7 bits, high bit set on all but the last; a ninth
 * byte carries 8 bits), or `undefined` when the value is not a blob. An empty blob (a new index) is 0.
 */
export function leadingVarint(value: unknown): number | undefined {
  let bytes: Uint8Array;
  if (value instanceof Uint8Array) bytes = value;
  else if (value instanceof ArrayBuffer) bytes = new Uint8Array(value);
  else return undefined;
  let result = 0;
  for (let index = 0; index < bytes.length && index < 9; index++) {
    const byte = bytes[index] ?? 0;
    if (index === 8) return result * 256 + byte;
    result = result * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return result;
  }
  return result;
}

/** A fragment `?, ?, ?` binding each value. */
function list(values: readonly string[]): SqlStatement {
  return join(values);
}
