import { maximumTerms, type QueryTerm } from "@contextblocks/text";
import { isWordCharacter } from "./word-character.js";

/**
 * A bounded window of an entry around the words a query matched, cut at spaces, with `…` where text was left
 * out; the entry itself when it fits. Found with plain substring search on the lower-cased text (a query word
 * or its stem at the start of a word), so it costs a few `indexOf` calls per result instead of tokenizing the
 * entry again or FTS5's `snippet()` (which reads every matched phrase's positions: it made a search five times
 * the cost of the bare statement at 1,000 entries). Where no word is found (a diacritic folded by the index,
 * say), the window is the start of the entry.
 */
export function excerpt(content: string, terms: readonly QueryTerm[], maximumCharacters: number): string {
  if (content.length <= maximumCharacters) return content;
  const lower = content.toLowerCase();
  // Each hit is one number, position × 64 + term index (planQuery keeps at most 32 terms): sorted as numbers
  // without an object a hit.
  const hits: number[] = [];
  for (let index = 0; index < terms.length && index < maximumTerms; index++) {
    const term = terms[index] as QueryTerm;
    findHits(lower, term.word, index, hits);
    if (term.stem !== term.word) findHits(lower, term.stem, index, hits);
  }
  let start = 0;
  if (hits.length > 0) {
    hits.sort(byNumber);
    // The window (of the excerpt's length) that starts at a hit and covers the most distinct terms.
    let bestPosition = Math.floor((hits[0] as number) / termSlots);
    let bestCovered = 0;
    // seenAt[term] = the window (its first hit + 1) that last counted the term.
    const seenAt = new Array<number>(Math.min(terms.length, maximumTerms)).fill(0);
    for (let first = 0; first < hits.length; first++) {
      const from = Math.floor((hits[first] as number) / termSlots);
      let covered = 0;
      for (let next = first; next < hits.length; next++) {
        const hit = hits[next] as number;
        if (Math.floor(hit / termSlots) >= from + maximumCharacters) break;
        const term = hit % termSlots;
        if (seenAt[term] !== first + 1) {
          seenAt[term] = first + 1;
          covered++;
        }
      }
      if (covered > bestCovered) {
        bestPosition = from;
        bestCovered = covered;
      }
    }
    // A little text before the first hit, so the excerpt reads as a sentence about it.
    start = Math.max(0, bestPosition - Math.floor(maximumCharacters / 5));
    start = Math.min(start, content.length - maximumCharacters);
  }
  let end = Math.min(content.length, start + maximumCharacters);
  if (start > 0) {
    const space = content.indexOf(" ", start);
    if (space >= 0 && space < end) start = space + 1;
  }
  if (end < content.length) {
    const space = content.lastIndexOf(" ", end);
    if (space > start) end = space;
  }
  return `${start > 0 ? "…" : ""}${content.slice(start, end).trim()}${end < content.length ? "…" : ""}`;
}

/** Occurrences of one query word looked at, at most: bounds the work on a long entry. */
const hitsPerTerm = 64;
/** The slots of a hit's number kept for its term: more than planQuery's `maximumTerms`. */
const termSlots = 64;

function byNumber(left: number, right: number): number {
  return left - right;
}

/** Pushes the positions of `needle` at the start of a word of `lower` (at most `hitsPerTerm`) as hits of `term`. */
function findHits(lower: string, needle: string, term: number, hits: number[]): void {
  if (needle.length === 0) return;
  let found = 0;
  for (let at = lower.indexOf(needle); at >= 0 && found < hitsPerTerm; at = lower.indexOf(needle, at + 1)) {
    if (at > 0 && isWordCharacter(lower.charCodeAt(at - 1))) continue;
    hits.push(at * termSlots + term);
    found++;
  }
}
