/**
 * Scale of @contextblocks/fts5 against agents/context's AgentSearchProvider on better-sqlite3 (a WAL file
 * database): time per set (new key and replaced key), delete, get (the count) and search, at 1k / 10k / 100k
 * entries; medians over repeated runs, with the ratio agents / ours.
 *
 * Each index is filled with the same synthetic entries (about 30 words drawn from a Zipf-like vocabulary of
 * 6,000 words plus common English). Ours is filled through `set`; agents' table is filled with the INSERT its
 * `set` runs, in one transaction (its `set` also scans the whole table first, which would make filling 100k
 * entries take hours). Queries are questions ("what do we know about <word> and <word>?") and the same
 * questions cut to keywords.
 *
 * Rows read and written per operation on a Durable Object (what Cloudflare bills) come from a workerd test in
 * the package, run with `--durable-object` (sizes 100 and 2,000; set FTS5_ROW_SIZES=1000,10000,100000 for more).
 *
 *   pnpm --filter @contextblocks/fts5 build
 *   cd bench && node --import tsx src/fts5-scale.ts                  # 1k, 10k, 100k
 *   cd bench && node --import tsx src/fts5-scale.ts --smoke          # 1k only, fewer runs
 *   cd bench && node --import tsx src/fts5-scale.ts --durable-object # also the workerd row costs
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { AgentSearchProvider } from "agents/context";
import Database from "better-sqlite3";
import { betterSqlite3Host } from "./agents-sql.js";
import { seededRandom } from "./corpus.js";
import { SqliteSearchFloor } from "./search-floor.js";

const smoke = process.argv.includes("--smoke");
const sizes = smoke ? [1_000] : [1_000, 20_000, 100_000];

const random = seededRandom;

const syllables = [
  "ka",
  "lo",
  "mi",
  "ren",
  "to",
  "vash",
  "el",
  "dor",
  "qui",
  "sa",
  "ne",
  "bru",
  "fin",
  "ga",
  "hol",
];
const english = (
  "the a of and to in is for on with that this it as at by from be are was were have has user project " +
  "team note meeting deploy service data customer order invoice report plan budget review schedule"
).split(" ");

function vocabulary(size: number): string[] {
  const next = random(7);
  const words = new Set<string>();
  while (words.size < size) {
    const count = 2 + Math.floor(next() * 3);
    let word = "";
    for (let index = 0; index < count; index++) word += syllables[Math.floor(next() * syllables.length)];
    words.add(word);
  }
  return [...words];
}

const words = vocabulary(6_000);

/** A word index with a Zipf-like distribution: a few words are common, most are rare. */
function zipf(next: () => number): number {
  return Math.min(words.length - 1, Math.floor(words.length ** next()) - 1);
}

function entryText(index: number): string {
  const next = random(1_000 + index);
  const parts: string[] = [];
  for (let position = 0; position < 30; position++) {
    parts.push(
      next() < 0.35 ? (english[Math.floor(next() * english.length)] ?? "the") : (words[zipf(next)] ?? ""),
    );
  }
  return `${parts.join(" ")}.`;
}

function questions(count: number): { question: string; keywords: string }[] {
  // Warm-up calls use the indexes past `count` (see timeEach).
  count += 3;
  const next = random(99);
  return Array.from({ length: count }, () => {
    const first = words[Math.floor(next() * 400)] ?? "";
    const second = words[Math.floor(next() * 2_000)] ?? "";
    return { question: `What do we know about ${first} and the ${second}?`, keywords: `${first} ${second}` };
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function timeEach(count: number, operation: (index: number) => Promise<unknown>): Promise<number> {
  // A few untimed calls first (on indexes past the timed ones), so the JIT has warmed up.
  for (let index = count; index < count + 3; index++) await operation(index);
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const start = performance.now();
    await operation(index);
    times.push(performance.now() - start);
  }
  return median(times);
}

/** Medians of two operations timed alternately (first, second, second, first, …), after a few untimed calls. */
async function timeAlternately(
  count: number,
  first: (index: number) => Promise<unknown>,
  second: (index: number) => Promise<unknown>,
): Promise<[number, number]> {
  for (let index = count; index < count + 3; index++) {
    await first(index);
    await second(index);
  }
  const times: [number[], number[]] = [[], []];
  for (let index = 0; index < count; index++) {
    // Which goes first alternates too: the second call of a pair finds the first one's pages in the CPU cache.
    const order: [number, (index: number) => Promise<unknown>][] = [
      [0, first],
      [1, second],
    ];
    if (index % 2 === 1) order.reverse();
    for (const [side, operation] of order) {
      const start = performance.now();
      await operation(index);
      times[side]?.push(performance.now() - start);
    }
  }
  return [median(times[0]), median(times[1])];
}

function openDatabase(directory: string, name: string): Database.Database {
  const database = new Database(join(directory, `${name}.sqlite`));
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  return database;
}

interface Row {
  operation: string;
  ours: number;
  theirs: number | null;
  /** For searches: mean matches returned per query, ours and agents'. */
  results?: [number, number];
  /** For the floor rows: the time of one statement on a plain FTS5 table of the same entries (`theirs` is then null). */
  floor?: number;
}

/**
 * The floor a search is held to (search-floor.ts): a plain two-column FTS5 table holding the same entries,
 * one statement with the query's content words ORed, ranked by FTS5, top 10, prepared once.
 */
function floorSearch(floor: SqliteSearchFloor, queries: string[]): (index: number) => Promise<unknown> {
  return async (index) => floor.search(queries[index % queries.length] ?? "");
}

/** Mean number of `[key]` matches in the results of `queries`. */
async function meanResults(
  search: (query: string) => Promise<string | null>,
  queries: string[],
): Promise<number> {
  let total = 0;
  for (const query of queries)
    total += ((await search(query)) ?? "").split("\n\n").filter((b) => b.startsWith("[")).length;
  return total / queries.length;
}

async function measure(size: number, directory: string): Promise<Row[]> {
  const runs = smoke ? 10 : 30;
  // agents' set scans every row: fewer runs at 100k keep the benchmark to minutes.
  const theirRuns = size >= 100_000 ? 5 : runs;

  const ourDatabase = openDatabase(directory, `ours-${size}`);
  const ours = new Fts5SearchProvider(ourDatabase, { label: "knowledge" });
  const plainTable = new SqliteSearchFloor(ourDatabase);
  for (let index = 0; index < size; index++) {
    await ours.set(`entry-${index}`, entryText(index));
    plainTable.add(`entry-${index}`, entryText(index));
  }

  const theirDatabase = openDatabase(directory, `agents-${size}`);
  const theirs = new AgentSearchProvider(betterSqlite3Host(theirDatabase));
  theirs.init("knowledge");
  await theirs.get(); // creates its table
  const insert = theirDatabase.prepare(
    "INSERT INTO cf_agents_search_fts (label, key, content) VALUES (?, ?, ?)",
  );
  theirDatabase.transaction(() => {
    for (let index = 0; index < size; index++) insert.run("knowledge", `entry-${index}`, entryText(index));
  })();

  const asked = questions(runs);
  const rows: Row[] = [];
  rows.push({
    operation: "set (new key)",
    ours: await timeEach(runs, (index) => ours.set(`new-${index}`, entryText(size + index))),
    theirs: await timeEach(theirRuns, (index) => theirs.set(`new-${index}`, entryText(size + index))),
  });
  rows.push({
    operation: "set (replace)",
    ours: await timeEach(runs, (index) => ours.set(`entry-${index * 7}`, entryText(size * 2 + index))),
    theirs: await timeEach(theirRuns, (index) =>
      theirs.set(`entry-${index * 7}`, entryText(size * 2 + index)),
    ),
  });
  rows.push({
    operation: "delete",
    ours: await timeEach(runs, (index) => ours.delete(`new-${index}`)),
    theirs: null,
  });
  rows.push({
    operation: "get (count)",
    ours: await timeEach(runs, () => ours.get()),
    theirs: await timeEach(runs, () => theirs.get()),
  });
  for (const form of ["question", "keywords"] as const) {
    const queries = asked.map((question) => question[form]);
    rows.push({
      operation: `search (${form})`,
      ours: await timeEach(runs, (index) => ours.search(queries[index] ?? "")),
      theirs: await timeEach(runs, (index) => theirs.search(queries[index] ?? "")),
      results: [
        await meanResults((query) => ours.search(query), queries),
        await meanResults((query) => theirs.search(query), queries),
      ],
    });
    // Ours and the floor timed alternately, call by call, so that both see the same load on a shared machine.
    const [ourSearch, floor] = await timeAlternately(
      runs * 3,
      (index) => ours.search(queries[index % queries.length] ?? ""),
      floorSearch(plainTable, queries),
    );
    rows.push({ operation: `search floor (${form})`, ours: ourSearch, theirs: null, floor });
  }
  ourDatabase.close();
  theirDatabase.close();
  return rows;
}

function formatRatio(ratio: number): string {
  if (ratio >= 100) return `${ratio.toFixed(0)}x`;
  if (ratio >= 1) return `${ratio.toFixed(1)}x`;
  return `${ratio.toFixed(3)}x`;
}

function milliseconds(value: number): string {
  return value >= 10 ? value.toFixed(1) : value.toFixed(3);
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), "fts5-scale-"));
  try {
    console.log(
      `FTS5 scale on better-sqlite3 (WAL file), median ms per operation${smoke ? " (smoke)" : ""}\n`,
    );
    console.log(
      [
        "entries".padStart(8),
        "operation".padEnd(18),
        "ours".padStart(9),
        "agents".padStart(9),
        "agents/ours".padStart(12),
        "matches (ours / agents)".padStart(24),
      ].join("  "),
    );
    for (const size of sizes) {
      for (const row of await measure(size, directory)) {
        if (row.floor !== undefined) {
          // ours/floor: how much a search costs beyond one statement on a plain table (the goal: at most 1.5x); the
          // two timed alternately, so this row's ratio is steadier than the absolute times above it.
          console.log(
            [
              String(size).padStart(8),
              row.operation.padEnd(18),
              milliseconds(row.floor).padStart(9),
              "-".padStart(9),
              `ours/floor ${formatRatio(row.ours / row.floor)}`,
            ].join("  "),
          );
          continue;
        }
        const ratio = row.theirs === null ? "(no delete)" : formatRatio(row.theirs / row.ours);
        const results =
          row.results === undefined ? "" : `${row.results[0].toFixed(1)} / ${row.results[1].toFixed(1)}`;
        console.log(
          [
            String(size).padStart(8),
            row.operation.padEnd(18),
            milliseconds(row.ours).padStart(9),
            (row.theirs === null ? "-" : milliseconds(row.theirs)).padStart(9),
            ratio.padStart(12),
            results.padStart(24),
          ]
            .join("  ")
            .trimEnd(),
        );
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }

  if (process.argv.includes("--durable-object")) {
    console.log("\nRows read / written per operation on a Durable Object (workerd):\n");
    const result = spawnSync(
      "pnpm",
      ["--filter", "@contextblocks/fts5", "exec", "vitest", "run", "--project", "workers", "row-cost"],
      { stdio: "inherit", env: { ...process.env, FTS5_PRINT_ROWS: "1" } },
    );
    if (result.status !== 0) process.exitCode = result.status ?? 1;
  }
}

await main();
