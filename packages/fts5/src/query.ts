import { isStopword } from "./stopwords.js";
import { type Token, tokenize } from "./tokenize.js";

/**
 * Turning query text into an FTS5 query. The text is never FTS5 syntax: it is cut into words the way the
 * index cuts content, and each word is sent as a double-quoted FTS5 string, where nothing is an operator.
 * `NOT`, `NEAR`, `OR`, `*`, `^`, `content:` and parentheses are words or separators like any other text.
 */

/** A query word the search looks for. */
export interface QueryTerm {
  /** The folded word, sent to FTS5 quoted (FTS5 stems it itself). */
  readonly word: string;
  /** Its index stem: the key for document frequency and for counting matched terms. */
  readonly stem: string;
}

export interface QueryPlan {
  /** Distinct terms (by stem), in query order, stopwords left out unless the query has nothing else. */
  readonly terms: readonly QueryTerm[];
  /**
   * Adjacent pairs of terms as they stand in the query (not across a stopword), sent as phrases; empty when
   * the query has fewer than three terms.
   */
  readonly pairs: readonly (readonly [QueryTerm, QueryTerm])[];
  /**
   * Every word of the query in order (stopwords included) when it is short enough to be a phrase: the
   * re-ranking puts entries that contain it first. Not sent to FTS5 (see `matchExpression`).
   */
  readonly phrase: readonly string[] | null;
}

/** Adjacent pairs are planned only for queries of at least this many terms. */
export const minimumTermsForPairs = 3;
/** At most this many distinct terms are searched (the first ones); a 10 kB query stays a bounded query. */
export const maximumTerms = 32;
/** The whole query counts as a phrase (an exact match ranks first) when it has between 2 and this many words. */
export const maximumPhraseWords = 12;
/** Only this much of a query is read: enough for any question, and a bound on the work for pasted text. */
export const maximumQueryCharacters = 16_384;

/** Plan a query, or `null` when the text holds no word at all (empty, whitespace, punctuation only). */
export function planQuery(text: string): QueryPlan | null {
  const tokens = tokenize(text, maximumQueryCharacters);
  if (tokens.length === 0) return null;
  const informative = tokens.filter((token) => !isStopword(token.folded));
  // A query of only stopwords ("NOT", "who are you") searches for those words: they are its meaning.
  const chosen = informative.length > 0 ? informative : tokens;
  const terms = distinctTerms(chosen).slice(0, maximumTerms);
  const kept = new Set(terms.map((term) => term.stem));
  return {
    terms,
    // Two terms need no pair: an entry with both already ranks high, and the phrase would cost a second walk
    // of both posting lists (a two-word search took 1.8x the bare statement at 20k entries with it).
    pairs: terms.length >= minimumTermsForPairs ? adjacentPairs(tokens, kept) : [],
    phrase:
      tokens.length >= 2 && tokens.length <= maximumPhraseWords ? tokens.map((token) => token.folded) : null,
  };
}

function distinctTerms(tokens: readonly Token[]): QueryTerm[] {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const token of tokens) {
    if (seen.has(token.stem)) continue;
    seen.add(token.stem);
    terms.push({ word: token.folded, stem: token.stem });
  }
  return terms;
}

function adjacentPairs(tokens: readonly Token[], kept: ReadonlySet<string>): [QueryTerm, QueryTerm][] {
  const pairs: [QueryTerm, QueryTerm][] = [];
  const seen = new Set<string>();
  for (let index = 0; index + 1 < tokens.length && pairs.length < maximumTerms; index++) {
    const first = tokens[index];
    const second = tokens[index + 1];
    if (first === undefined || second === undefined) continue;
    if (!kept.has(first.stem) || !kept.has(second.stem) || first.stem === second.stem) continue;
    const id = `${first.stem} ${second.stem}`;
    if (seen.has(id)) continue;
    seen.add(id);
    pairs.push([
      { word: first.folded, stem: first.stem },
      { word: second.folded, stem: second.stem },
    ]);
  }
  return pairs;
}

/** An FTS5 string: double quotes around the text, inner double quotes doubled. Never an operator. */
export function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** Options of `fts5MatchExpression`. */
export interface MatchExpressionOptions {
  /**
   * The column (or columns) the words are looked for in: `"content"` or `["key", "content"]`. Default: every
   * column of the table. Names are FTS5 column names: letters, digits and underscores.
   */
  readonly column?: string | readonly string[];
}

const columnName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The FTS5 MATCH expression of a plan, for any FTS5 table tokenized `porter unicode61`: every term and every
 * adjacent pair of the query, ORed, each a double-quoted FTS5 string (never an operator, whatever the user
 * typed), optionally restricted to one or more columns. Rank with `ORDER BY rank` (bm25): an entry with more
 * and rarer terms ranks first, and a pair found as written adds its own score (so "new york pizza" finds the
 * entry with that phrase before one that repeats "pizza" and "york" apart). The pairs cost about a fifth of a
 * search's time at 20k entries, for each pair a second walk of its two words' posting lists.
 *
 * Common English words are left out by `planQuery` (stopwords), so FTS5 never walks their long posting lists.
 * The whole query is not sent as a phrase (with its stopwords it would walk exactly those lists); prefixes are
 * not used (FTS5 applies them to the stem: `"running" *` is `run*`, which also finds "rune").
 */
export function fts5MatchExpression(plan: QueryPlan, options: MatchExpressionOptions = {}): string {
  const clauses = plan.terms.map((term) => quote(term.word));
  for (const [first, second] of plan.pairs) clauses.push(quote(`${first.word} ${second.word}`));
  const words = `(${clauses.join(" OR ")})`;
  const { column } = options;
  if (column === undefined) return words;
  const columns = typeof column === "string" ? [column] : [...column];
  if (columns.length === 0 || !columns.every((name) => columnName.test(name))) {
    throw new TypeError(
      `fts5MatchExpression: column must be one or more FTS5 column names, got ${JSON.stringify(column)}`,
    );
  }
  return `${columns.length === 1 ? columns[0] : `{${columns.join(" ")}}`} : ${words}`;
}
