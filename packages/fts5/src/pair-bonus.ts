import { foldToken, type QueryPlan, type QueryTerm } from "@contextblocks/text";
import { isWordCharacter } from "./word-character.js";

/**
 * Adjacent query words found as written ("new york pizza" in "the new york pizza on the corner") lift an entry
 * above one that holds the same words apart. FTS5 could score the pairs itself, as phrases in the MATCH, but
 * each phrase makes it walk both words' posting lists twice more in every segment of the index (once to match,
 * once for the phrase's bm25 weight): 0.35–0.6× of a three-word search at 20,000 entries, more as segments
 * pile up between merges. So FTS5 ranks by the words alone, the search fetches twice as many candidates, and
 * this re-ranks them: each pair found in an entry (content, context, or key when keys are searched) multiplies
 * its bm25 score by 1 + `pairWeight` / (terms in the query), so a pair counts about as much as two more terms
 * matched. On LoCoMo and the knowledge corpus this ranks as well as the phrases did (hit@10 0.682 against
 * 0.681, MRR 0.470 against 0.457).
 */

/** How many of the query's terms one pair found as written is worth. */
const pairWeight = 2;
/** Characters of a field looked at for pairs: bounds the work on a huge entry (twenty are read a search). */
const scannedCharacters = 100_000;

/** One adjacent pair of query words: what a word of the entry starts with for each (see `wordStarts`). */
export type Pair = readonly [readonly string[], readonly string[]];

/** The adjacent pairs of a plan (none when the query has fewer than three terms). */
export function planPairs(plan: QueryPlan | null): Pair[] {
  if (plan === null) return [];
  return plan.pairs.map(([first, second]) => [wordStarts(first), wordStarts(second)]);
}

/**
 * What a word of the entry starts with when the index stems it as it stems this term: the shorter of the word
 * and its stem when one begins the other ("parent" for "parental"), else either ("happy" or "happi").
 */
function wordStarts(term: QueryTerm): string[] {
  const { word, stem } = term;
  if (word.startsWith(stem)) return [stem];
  if (stem.startsWith(word)) return [word];
  return [word, stem];
}

/**
 * Whether `folded` (text folded as the index folds it, see `foldedText`) holds the pair as written: a word
 * starting with the first, then separators, then a word starting with the second. Found with `indexOf` and
 * character codes: a case-insensitive Unicode regular expression cost a third of a search. Word characters
 * are ASCII letters and digits and anything beyond ASCII, as excerpts read them.
 */
export function holdsPair(folded: string, pair: Pair): boolean {
  for (const first of pair[0]) {
    for (let at = folded.indexOf(first); at >= 0; at = folded.indexOf(first, at + 1)) {
      if (at > 0 && isWordCharacter(folded.charCodeAt(at - 1))) continue;
      let next = at + first.length;
      while (next < folded.length && isWordCharacter(folded.charCodeAt(next))) next++;
      const separators = next;
      while (next < folded.length && !isWordCharacter(folded.charCodeAt(next))) next++;
      if (next === separators) continue;
      for (const second of pair[1]) if (folded.startsWith(second, next)) return true;
    }
  }
  return false;
}

/** The fields of a candidate row the re-ranking reads. */
export interface PairCandidate {
  readonly key: unknown;
  readonly content: unknown;
  readonly context: unknown;
  /** bm25 as FTS5 gives it: negative, lower is better. */
  readonly score: unknown;
}

/**
 * The best `limit` of `rows` (best first, as FTS5 ranked them) once each has the bonus of the pairs it holds.
 * Equal scores keep FTS5's order, so both sorts of the search return the same results.
 */
export function rankWithPairs<Row extends PairCandidate>(
  rows: readonly Row[],
  pairs: readonly Pair[],
  termCount: number,
  searchKeys: boolean,
  limit: number,
): Row[] {
  const ranked = rows.map((row, index) => {
    const content = foldedText(row.content);
    const context = typeof row.context === "string" ? foldedText(row.context) : "";
    const key = searchKeys ? foldedText(row.key) : "";
    let found = 0;
    for (const pair of pairs) {
      if (holdsPair(content, pair) || holdsPair(context, pair) || holdsPair(key, pair)) found++;
    }
    const score = Number(row.score) * (1 + (pairWeight * found) / Math.max(1, termCount));
    return { row: found === 0 ? row : { ...row, score }, score, index };
  });
  ranked.sort((left, right) => left.score - right.score || left.index - right.index);
  return ranked.slice(0, limit).map((entry) => entry.row);
}

/** Latin letters with diacritics (precomposed, or the combining marks of decomposed ones). */
const latinDiacritics = /[\u00c0-\u024f\u1e00-\u1eff]|[\u0300-\u036f]/;

/**
 * A field's first `scannedCharacters`, lower-cased and without the Latin diacritics the index drops, as the
 * query's words are: "Café Crème" holds the pair of "cafe creme" and of "café crème". Text without such
 * letters (most of it, and every other script) skips the Unicode normalisation folding needs.
 */
export function foldedText(value: unknown): string {
  const text = String(value);
  const lower = (text.length > scannedCharacters ? text.slice(0, scannedCharacters) : text).toLowerCase();
  return latinDiacritics.test(lower) ? foldToken(lower) : lower;
}
