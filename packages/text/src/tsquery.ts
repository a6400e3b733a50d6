import type { QueryPlan } from "./plan.js";

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
 * itself, as FTS5's `porter` does.
 */
export interface TsqueryInputs {
  readonly terms: readonly string[];
  readonly pairs: readonly string[];
  readonly phrase: string | null;
}

/** The texts to bind for a plan (see `TsqueryInputs`). Pure string work: no SQL, no database. */
export function tsqueryInputs(plan: QueryPlan): TsqueryInputs {
  return {
    terms: plan.terms.map((term) => term.word),
    pairs: plan.pairs.map(([first, second]) => `${first.word} ${second.word}`),
    phrase: plan.phrase === null ? null : plan.phrase.join(" "),
  };
}
