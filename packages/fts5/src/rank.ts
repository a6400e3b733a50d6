import type { QueryPlan } from "./query.js";
import { tokenize } from "./tokenize.js";

/**
 * The second ranking stage. FTS5 returns the best candidates by bm25 (key weighted 2, content 1); this
 * stage re-orders them so that
 *
 * 1. entries that contain the whole query as a phrase come first (an exact match is the answer);
 * 2. then by bm25 scaled by how much of the query the entry covers: the share of the query's weight (each
 *    term weighs its inverse document frequency) whose terms the entry contains. An entry with three of four
 *    terms outranks one that repeats a single term many times, while a rare term still counts for more than a
 *    common one.
 */

export interface Candidate {
  readonly key: string;
  readonly content: string;
  /** FTS5 `rank`: bm25, negative, lower is better. */
  readonly rank: number;
}

/** How much of an entry is read for coverage and phrase checks; bm25 itself always sees the whole entry. */
export const maximumCharactersExamined = 32_768;

/** Inverse document frequency as bm25 computes it, floored so that no term weighs nothing. */
export function inverseDocumentFrequency(documentFrequency: number, documents: number): number {
  const idf = Math.log((documents - documentFrequency + 0.5) / (documentFrequency + 0.5));
  return Math.max(idf, 0.1);
}

export function rerank(
  candidates: readonly Candidate[],
  plan: QueryPlan,
  weights: ReadonlyMap<string, number>,
  searchKeys: boolean,
): Candidate[] {
  const totalWeight = plan.terms.reduce((sum, term) => sum + (weights.get(term.stem) ?? 1), 0);
  const phraseStems =
    plan.phrase === null ? null : tokenize(plan.phrase.join(" ")).map((token) => token.stem);
  const scored = candidates.map((candidate, position) => {
    const text = searchKeys ? `${candidate.key}\n${candidate.content}` : candidate.content;
    const stems = tokenize(text, maximumCharactersExamined).map((token) => token.stem);
    const present = new Set(stems);
    let covered = 0;
    for (const term of plan.terms) if (present.has(term.stem)) covered += weights.get(term.stem) ?? 1;
    const coverage = totalWeight > 0 ? covered / totalWeight : 0;
    const exact = phraseStems !== null && containsSequence(stems, phraseStems);
    return { candidate, position, exact, score: -candidate.rank * (0.25 + coverage) };
  });
  scored.sort(
    (left, right) =>
      Number(right.exact) - Number(left.exact) || right.score - left.score || left.position - right.position,
  );
  return scored.map((entry) => entry.candidate);
}

function containsSequence(haystack: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0 || needle.length > haystack.length) return false;
  outer: for (let start = 0; start + needle.length <= haystack.length; start++) {
    for (let offset = 0; offset < needle.length; offset++) {
      if (haystack[start + offset] !== needle[offset]) continue outer;
    }
    return true;
  }
  return false;
}
