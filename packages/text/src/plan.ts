import { compatibleWord } from "./compatibility-forms.js";
import { compoundsOf } from "./compounds.js";
import { asksWhen } from "./date-expressions.js";
import { isStopword } from "./stopwords.js";
import { type QueryToken, queryTokens } from "./tokenize.js";

/**
 * Turning query text into the words a full-text index is asked for. The text is never query syntax: it is cut
 * into words the way the index cuts content (tokenize.ts), common English words are left out (stopwords.ts),
 * and the plan is rendered for one engine by fts5-match.ts (SQLite FTS5) or tsquery.ts (Postgres), where every
 * word is a quoted string or a bound value. `NOT`, `NEAR`, `OR`, `*`, `^`, `content:`, `&`, `|`, `!` and
 * parentheses are words or separators like any other text.
 */

/** A query word the search looks for. */
export interface QueryTerm {
  /** The folded word, sent to the engine quoted or bound (the engine stems it itself). */
  readonly word: string;
  /** Its index stem: the key for document frequency and for counting matched terms. */
  readonly stem: string;
  /**
   * The word as the query wrote it (diacritics kept; ASCII letters lower-cased, others left for the database to
   * lower-case: `QueryToken.written`), present only when folding changed more than ASCII letters' case. FTS5
   * folds the text it indexes as the query is folded; Postgres' `english` configuration keeps diacritics, and
   * in a database of locale `C` the case of letters outside ASCII, so a search there asks for both forms.
   */
  readonly written?: string;
  /**
   * The folded word in canonical decomposition (NFD), present only when that differs from `word` (never for
   * ASCII): a text stored decomposed, as macOS and some keyboards write Hangul ("한" as its three jamo) and
   * accented Greek or Cyrillic, is indexed by FTS5 and Postgres otherwise than the composed word the query is
   * folded to, so a search asks for this form too and finds the word whichever form each side was written in.
   */
  readonly decomposed?: string;
  /**
   * The word as written (`written`, or `word` for ASCII) when it holds a character the compatibility rule reads
   * otherwise ("ｔｉｄｅ", "ﬁnance", "ti\u00adde": `compatibleWord`), which `word` is folded from. A row an earlier
   * release indexed holds such a word as written, so a search asks FTS5 for this form too.
   */
  readonly typed?: string;
}

/** What `planQuery` makes of a question: the words to look for, in a form every engine's renderer reads. */
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
   * ranking puts entries that contain it first. Not sent to FTS5 (see `fts5MatchExpression`).
   */
  readonly phrase: readonly string[] | null;
  /** Whether the query asks when ("when…", "how long…", "what year…": `asksWhen`). */
  readonly asksWhen: boolean;
  /**
   * The query's e-mail addresses, host names, URLs, paths and version numbers as written, lower-cased
   * (`compoundsOf`): one lexeme for Postgres' parser, which a Postgres search asks for beside the terms. FTS5
   * cuts them into the terms above. Empty when there are none (absent in a plan built by hand).
   */
  readonly compounds?: readonly string[];
}

/** Adjacent pairs are planned only for queries of at least this many terms. */
export const minimumTermsForPairs = 3;
/** At most this many distinct terms are searched (the first ones); a 10 kB query stays a bounded query. */
export const maximumTerms = 32;
/** The whole query counts as a phrase (an exact match ranks first) when it has between 2 and this many words. */
export const maximumPhraseWords = 12;
/** Only this much of a query is read: enough for any question, and a bound on the work for pasted text. */
export const maximumQueryCharacters = 16_384;

/**
 * Plans of the queries met lately, by text: one search plans its query more than once (the store that runs it,
 * then the re-ranking of its candidates), and planning (cutting, folding, stemming) is a measurable part of a
 * search's time. Frozen, so a caller that changes a plan it was given cannot change the next caller's.
 */
const rememberedPlans = new Map<string, QueryPlan | null>();
const plansRemembered = 16;
/** Longer queries (pasted text) are planned each time: no memory is kept for them. */
const longestRememberedQuery = 1_024;

/** Plan a query, or `null` when the text holds no word at all (empty, whitespace, punctuation only). */
export function planQuery(text: string): QueryPlan | null {
  const remembered = text.length <= longestRememberedQuery;
  if (remembered && rememberedPlans.has(text)) return rememberedPlans.get(text) as QueryPlan | null;
  const planned = planOf(text);
  const plan = planned === null ? null : frozen(planned);
  if (!remembered) return plan;
  if (rememberedPlans.size >= plansRemembered) {
    // The oldest goes first: a Map iterates in insertion order.
    rememberedPlans.delete(rememberedPlans.keys().next().value as string);
  }
  rememberedPlans.set(text, plan);
  return plan;
}

function frozen(plan: QueryPlan): QueryPlan {
  for (const term of plan.terms) Object.freeze(term);
  for (const pair of plan.pairs) {
    for (const term of pair) Object.freeze(term);
    Object.freeze(pair);
  }
  for (const list of [plan.terms, plan.pairs, plan.phrase, plan.compounds]) if (list) Object.freeze(list);
  return Object.freeze(plan);
}

function planOf(text: string): QueryPlan | null {
  const tokens = queryTokens(text, maximumQueryCharacters);
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
    asksWhen: asksWhen(text.slice(0, maximumQueryCharacters)),
    compounds: compoundsOf(text.slice(0, maximumQueryCharacters)),
  };
}

function termOf(token: QueryToken): QueryTerm {
  const term: { word: string; stem: string; written?: string; decomposed?: string; typed?: string } = {
    word: token.folded,
    stem: token.stem,
  };
  if (token.written !== token.folded) term.written = token.written;
  if (compatibleWord(token.written) !== token.written) term.typed = token.written;
  // A folded word is NFC (`foldToken`); only a word outside ASCII can decompose.
  if (!ascii.test(token.folded)) {
    const decomposed = token.folded.normalize("NFD");
    if (decomposed !== token.folded) term.decomposed = decomposed;
  }
  return term;
}

/** Text of ASCII characters only. */
const ascii = /^[\x00-\x7f]*$/;

function distinctTerms(tokens: readonly QueryToken[]): QueryTerm[] {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const token of tokens) {
    if (seen.has(token.stem)) continue;
    seen.add(token.stem);
    terms.push(termOf(token));
  }
  return terms;
}

function adjacentPairs(tokens: readonly QueryToken[], kept: ReadonlySet<string>): [QueryTerm, QueryTerm][] {
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
    pairs.push([termOf(first), termOf(second)]);
  }
  return pairs;
}
