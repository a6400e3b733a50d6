import type { QueryPlan } from "./plan.js";

/** An FTS5 string: double quotes around the text, inner double quotes doubled. Never an operator. */
export function fts5String(text: string): string {
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
  const clauses: string[] = [];
  for (const term of plan.terms) {
    clauses.push(fts5String(term.word));
    // FTS5 cuts a decomposed text otherwise than the composed word: asked for as written too (`QueryTerm.decomposed`).
    if (term.decomposed !== undefined) clauses.push(fts5String(term.decomposed));
    // A row an earlier release indexed holds a compatibility form as written (`QueryTerm.typed`).
    if (term.typed !== undefined) clauses.push(fts5String(term.typed));
  }
  for (const [first, second] of plan.pairs) clauses.push(fts5String(`${first.word} ${second.word}`));
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
