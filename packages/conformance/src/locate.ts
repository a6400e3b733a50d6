import type { SearchEntry } from "./search-corpus.js";

/**
 * Where an entry appears in a search result: the first position of its key or of its full text, or -1.
 * The suite does not depend on a result layout; it needs each match's key or full text in it.
 */
export function positionOf(result: string | null, entry: SearchEntry): number {
  if (result === null) return -1;
  const positions = [result.indexOf(entry.key), result.indexOf(entry.content)].filter((index) => index >= 0);
  return positions.length === 0 ? -1 : Math.min(...positions);
}

/** The entries of `entries` that appear in `result`, in the order they appear. */
export function entriesIn(result: string | null, entries: readonly SearchEntry[]): SearchEntry[] {
  return entries
    .map((entry) => ({ entry, position: positionOf(result, entry) }))
    .filter((found) => found.position >= 0)
    .sort((left, right) => left.position - right.position)
    .map((found) => found.entry);
}

/** A result for failure messages: the keys found, in order, or what came back. */
export function describeResult(result: string | null, entries: readonly SearchEntry[]): string {
  if (result === null) return "null";
  const found = entriesIn(result, entries);
  if (found.length === 0) return `a result with none of the entries: ${JSON.stringify(result.slice(0, 120))}`;
  return `[${found.map((entry) => entry.key).join(", ")}]`;
}
