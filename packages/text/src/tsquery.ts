import type { QueryPlan, QueryTerm } from "./plan.js";

/**
 * A plan as the texts a Postgres full-text search binds: never `tsquery` syntax built from the question, only
 * plain words as bound values of functions that read their argument as words.
 *
 * - `terms`: one text per planned term. Bind each to `plainto_tsquery('english', $n)` and OR the results with
 *   the `||` operator written in the statement; an entry matches when it has any term.
 * - `pairs`: one text per adjacent pair of terms as written (`"ice cream"`). Bind each to
 *   `phraseto_tsquery('english', $n)`: an entry that holds the pair as written ranks higher.
 * - `phrase`: every word of a short query, stopwords included, for `phraseto_tsquery`: an entry holding the
 *   whole question as written ranks first. `null` when the query has one word or more than 12.
 *
 * The words are folded as `unicode61` folds them (tokenize.ts); Postgres' `english` configuration stems them
 * itself, as FTS5's `porter` does. It keeps diacritics, though ("café" is 'café' in an index that does not fold
 * them: `@contextblocks/postgres` folds its own where the database allows), so where folding removed some,
 * `writtenTerms` and `writtenPairs` hold the words as the query wrote them (ASCII letters lower-cased, other
 * letters' case kept: under locale `C` Postgres lower-cases ASCII alone, so "Москва" is 'Москва' there), else
 * `null`: bind those too and OR them in (`plainto_tsquery($term) || plainto_tsquery($written)`), so "café" finds
 * "café" and "cafe", and "Москва" finds "Москва".
 */
export interface TsqueryInputs {
  readonly terms: readonly string[];
  readonly pairs: readonly string[];
  readonly phrase: string | null;
  /** Per term, the word as written when it differs from the folded one (diacritics, a capital outside ASCII), else `null`. */
  readonly writtenTerms: readonly (string | null)[];
  /** Per pair, the pair as written when either word differs from its folded form, else `null`. */
  readonly writtenPairs: readonly (string | null)[];
  /**
   * The query's e-mail addresses, host names, URLs, paths and version numbers, as written (`QueryPlan.compounds`):
   * Postgres' parser keeps each whole, so bind each to `plainto_tsquery` as one more term.
   */
  readonly compounds: readonly string[];
}

/** The texts to bind for a plan (see `TsqueryInputs`). Pure string work: no SQL, no database. */
export function tsqueryInputs(plan: QueryPlan): TsqueryInputs {
  return {
    terms: plan.terms.map((term) => term.word),
    pairs: plan.pairs.map(([first, second]) => `${first.word} ${second.word}`),
    phrase: plan.phrase === null ? null : plan.phrase.join(" "),
    writtenTerms: plan.terms.map((term) => term.written ?? null),
    writtenPairs: plan.pairs.map(writtenPair),
    compounds: plan.compounds ?? [],
  };
}

/** A pair as the query wrote it, when either word's diacritics were folded away; else `null`. */
export function writtenPair([first, second]: readonly [QueryTerm, QueryTerm]): string | null {
  if (first.written === undefined && second.written === undefined) return null;
  return `${first.written ?? first.word} ${second.written ?? second.word}`;
}
