/**
 * A small ranked full-text search for the in-memory search provider: unicode words, lower-cased, English
 * stop words dropped, a light suffix stemmer, any-term matching ranked by BM25, exact phrase first.
 * Query text is only ever words: no operators, so no input can act as syntax.
 */

const STOP_WORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its " +
    "me my of on or our she he so than that the their them then there these they this to was we were what " +
    "when where which who whom why will with would you your about after all am any before being both each " +
    "few more most other some such only own same too very just should now"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}]+/gu;

/** Reduces common English inflections so "running", "runs" and "run" meet. */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  const rules: [RegExp, string][] = [
    [/ies$/, "y"],
    [/sses$/, "ss"],
    [/([^s])s$/, "$1"],
    [/eed$/, "ee"],
    // A lookbehind, not a leading `(\w{3,})`: that group retried from every start made a long word quadratic.
    [/(?<=\w{3})ing$/, ""],
    [/(?<=\w{3})ed$/, ""],
    [/(?<=\w{3})ly$/, ""],
  ];
  for (const [pattern, replacement] of rules) {
    if (pattern.test(word)) return undoubled(word.replace(pattern, replacement));
  }
  return word;
}

function undoubled(word: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(word) && !/(ll|ss|zz)$/.test(word) ? word.slice(0, -1) : word;
}

export function terms(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((word) => !STOP_WORDS.has(word)).map(stem);
}

export interface Document {
  key: string;
  content: string;
}

/** Ranks documents for a query; returns at most `limit`, best first. */
export function rank(documents: readonly Document[], query: string, limit: number): Document[] {
  const queryTerms = [...new Set(terms(query))];
  if (queryTerms.length === 0) return [];
  const analysed = documents.map((document) => ({ document, terms: terms(document.content) }));
  const averageLength =
    analysed.reduce((sum, entry) => sum + entry.terms.length, 0) / (analysed.length || 1) || 1;
  const frequency = new Map<string, number>();
  for (const term of queryTerms) {
    frequency.set(term, analysed.filter((entry) => entry.terms.includes(term)).length);
  }
  const phrase = query.toLowerCase().trim().replace(/\s+/g, " ");
  const scored = analysed.flatMap((entry) => {
    let score = 0;
    for (const term of queryTerms) {
      const count = entry.terms.filter((candidate) => candidate === term).length;
      if (count === 0) continue;
      const documentFrequency = frequency.get(term) ?? 0;
      const idf = Math.log(1 + (analysed.length - documentFrequency + 0.5) / (documentFrequency + 0.5));
      score += (idf * count * 2.2) / (count + 1.2 * (0.25 + (0.75 * entry.terms.length) / averageLength));
    }
    if (score === 0) return [];
    if (phrase.length > 0 && entry.document.content.toLowerCase().replace(/\s+/g, " ").includes(phrase))
      score += 100;
    return [{ document: entry.document, score }];
  });
  return scored
    .sort((left, right) => right.score - left.score || left.document.key.localeCompare(right.document.key))
    .slice(0, limit)
    .map((entry) => entry.document);
}
