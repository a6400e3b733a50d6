/**
 * The excerpt of @contextblocks/fts5 0.x before hits became numbers (issue 25): kept verbatim as the reference
 * the property test in test/node/excerpt-reference.test.ts compares the current `excerpt` with.
 */
import type { QueryTerm } from "@contextblocks/text";

/**
 * A bounded window of an entry around the words a query matched, cut at spaces, with `…` where text was left
 * out; the entry itself when it fits. Found with plain substring search on the lower-cased text (a query word
 * or its stem at the start of a word), so it costs a few `indexOf` calls per result instead of tokenizing the
 * entry again or FTS5's `snippet()` (which reads every matched phrase's positions: it made a search five times
 * the cost of the bare statement at 1,000 entries). Where no word is found (a diacritic folded by the index,
 * say), the window is the start of the entry.
 */
export function referenceExcerpt(
  content: string,
  terms: readonly QueryTerm[],
  maximumCharacters: number,
): string {
  if (content.length <= maximumCharacters) return content;
  const lower = content.toLowerCase();
  const hits: { position: number; term: number }[] = [];
  terms.forEach((term, index) => {
    for (const needle of new Set([term.word, term.stem])) {
      if (needle.length === 0) continue;
      let found = 0;
      for (
        let at = lower.indexOf(needle);
        at >= 0 && found < hitsPerTerm;
        at = lower.indexOf(needle, at + 1)
      ) {
        if (at > 0 && isWordCharacter(lower.charCodeAt(at - 1))) continue;
        hits.push({ position: at, term: index });
        found++;
      }
    }
  });
  let start = 0;
  if (hits.length > 0) {
    hits.sort((left, right) => left.position - right.position);
    // The window (of the excerpt's length) that starts at a hit and covers the most distinct terms.
    let best = { position: hits[0]?.position ?? 0, covered: 0 };
    for (let first = 0; first < hits.length; first++) {
      const from = hits[first]?.position ?? 0;
      const covered = new Set<number>();
      for (
        let next = first;
        next < hits.length && (hits[next]?.position ?? 0) < from + maximumCharacters;
        next++
      ) {
        covered.add(hits[next]?.term ?? 0);
      }
      if (covered.size > best.covered) best = { position: from, covered: covered.size };
    }
    // A little text before the first hit, so the excerpt reads as a sentence about it.
    start = Math.max(0, best.position - Math.floor(maximumCharacters / 5));
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

/** ASCII letters and digits, and anything beyond ASCII (a letter of another script, most likely). */
function isWordCharacter(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 122) || code >= 128;
}
