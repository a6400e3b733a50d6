/**
 * Search speed against the floor: `Fts5SearchProvider.search` (planning, the scope check, key and context
 * columns, the pair re-ranking, excerpts, formatting) against one bare FTS5 statement on the same index (the
 * query's terms ORed, bm25, top 10), at 20k and 100k entries, on two corpora:
 * - "zipf": about 30 words an entry drawn from a Zipf-like vocabulary of 6,000 words plus common English
 *   (the kind of corpus bench/src/fts5-scale.ts uses), queries of 3 words of the same vocabulary;
 * - "random": 5,000 distinct words `w0…w4999` drawn uniformly, 30 words an entry, 3-word queries, and on the
 *   same index 5-word queries (more terms, and more adjacent pairs to look for in the candidates).
 * Medians of per-query times over the same queries, after a warm-up, the two run in turns (each goes first for
 * half the queries: the second finds the query's posting lists warm); the ratio is ours / bare (goal ≤ 1.5).
 *
 *   pnpm --filter @contextblocks/fts5 build
 *   cd bench && node --import tsx src/search-speed.ts           # 20k and 100k
 *   cd bench && node --import tsx src/search-speed.ts --smoke   # 2k only
 */
import { performance } from "node:perf_hooks";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { fts5MatchExpression, planQuery } from "@contextblocks/text";
import Database from "better-sqlite3";
import { markdownTable } from "./markdown.js";

const smoke = process.argv.includes("--smoke");
const sizes = smoke ? [2_000] : [20_000, 100_000];
const queryCount = smoke ? 50 : 300;

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

interface Corpus {
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

const corpora: Corpus[] = [
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function main(): Promise<void> {
  const rows: string[][] = [];
  for (const corpus of corpora) {
    for (const size of sizes) {
      const database = new Database(":memory:");
      const provider = new Fts5SearchProvider(database, { label: "speed" });
      const next = random(size);
      await provider.set("warm", "warm");
      database.exec("BEGIN");
      for (let index = 0; index < size; index++) await provider.set(`e${index}`, corpus.entry(next));
      database.exec("COMMIT");
      const bare = database.prepare(
        `SELECT rowid, content FROM contextblocks_search_index WHERE contextblocks_search_index MATCH ?
         ORDER BY bm25(contextblocks_search_index) LIMIT 10`,
      );
      const bareExpression = (query: string) => {
        const plan = planQuery(query);
        return plan === null ? '""' : fts5MatchExpression({ ...plan, pairs: [] }, { column: "content" });
      };
      for (const words of corpus.queryWords) {
        const queries = Array.from({ length: queryCount }, () => corpus.query(next, words));
        const expressions = queries.map(bareExpression);
        const ours: number[] = [];
        const floor: number[] = [];
        for (const round of [0, 1, 2]) {
          for (const [index, query] of queries.entries()) {
            // Whichever runs second finds the query's posting lists warm in the CPU caches: alternate.
            const oursFirst = (index + round) % 2 === 0;
            const start = performance.now();
            if (oursFirst) await provider.search(query);
            else bare.all(expressions[index]);
            const middle = performance.now();
            if (oursFirst) bare.all(expressions[index]);
            else await provider.search(query);
            const end = performance.now();
            if (round > 0) {
              ours.push(oursFirst ? middle - start : end - middle);
              floor.push(oursFirst ? end - middle : middle - start);
            }
          }
        }
        const oursMedian = median(ours);
        const floorMedian = median(floor);
        rows.push([
          corpus.name,
          size.toLocaleString("en"),
          String(words),
          `${(oursMedian * 1000).toFixed(0)} µs`,
          `${(floorMedian * 1000).toFixed(0)} µs`,
          `${(oursMedian / floorMedian).toFixed(2)}×`,
        ]);
      }
      database.close();
    }
  }
  console.log(
    markdownTable(
      [
        "corpus",
        "entries",
        "query words",
        "Fts5SearchProvider.search",
        "bare FTS5 statement",
        "ours / bare (goal ≤ 1.5× on 3 words)",
      ],
      rows,
    ),
  );
}

await main();
