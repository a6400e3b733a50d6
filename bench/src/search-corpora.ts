/**
 * The corpora search-speed.ts times and search-equality.ts compares statements on: seeded, so every run fills
 * the same entries and asks the same queries.
 */
import { seededRandom } from "./corpus.js";

/** The corpora's seeded generator (corpus.ts's mulberry32). */
export const random = seededRandom;

const common = "the a and of to in is it that for on with as was at by this we you they be have".split(" ");
const syllables = [
  "ka",
  "lo",
  "mi",
  "ren",
  "tu",
  "sha",
  "vel",
  "dor",
  "pi",
  "quen",
  "zu",
  "bar",
  "nel",
  "os",
];

export interface Corpus {
  name: string;
  entry(next: () => number): string;
  query(next: () => number, words: number): string;
  /** Words per query, one row each. */
  queryWords: number[];
}

function zipfWord(next: () => number): string {
  // Rank ~ 1/u: a few words very common, most rare; word text from its rank.
  const rank = Math.min(5_999, Math.floor(1 / (next() + 1 / 6_000)) + Math.floor(next() * 50));
  let word = "";
  for (let value = rank + 1; value > 0; value = Math.floor(value / syllables.length)) {
    word += syllables[value % syllables.length];
  }
  return word;
}

export const corpora: Corpus[] = [
  {
    name: "zipf",
    entry: (next) =>
      Array.from({ length: 30 }, () =>
        next() < 0.35 ? common[Math.floor(next() * common.length)] : zipfWord(next),
      ).join(" "),
    query: (next, words) => Array.from({ length: words }, () => zipfWord(next)).join(" "),
    queryWords: [3],
  },
  {
    name: "random",
    entry: (next) => Array.from({ length: 30 }, () => `w${Math.floor(next() * 5_000)}`).join(" "),
    query: (next, words) => Array.from({ length: words }, () => `w${Math.floor(next() * 5_000)}`).join(" "),
    queryWords: [3, 5],
  },
];
