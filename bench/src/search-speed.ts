/**
 * Search speed against the floor a user compares against (search-floor.ts): `Fts5SearchProvider.search` against
 * a plain two-column FTS5 table (`key`, `content`, `porter unicode61`, `ORDER BY rank LIMIT 10`, MATCH the
 * query's content words ORed) holding the same entries after the same writes, and `PostgresSearchProvider.search`
 * against one query on a plain `tsvector` + GIN table of the same texts. At 20k and 100k entries, on two corpora:
 * - "zipf": about 30 words an entry drawn from a Zipf-like vocabulary of 6,000 words plus common English
 *   (the kind of corpus bench/src/fts5-scale.ts uses), queries of 3 words of the same vocabulary;
 * - "random": 5,000 distinct words `w0…w4999` drawn uniformly, 30 words an entry, 3-word queries, and on the
 *   same index 5-word queries (more terms, and more adjacent pairs to look for in the candidates).
 * Medians of per-query times over the same queries (300; 100 on Postgres), after a warm-up, paired in one process: ours and the floor
 * run in turns (each goes first for half the queries: the second finds the query's posting lists warm); the
 * ratio is ours / floor (goal: at most 1.5× on SQLite, 2× on Postgres).
 *
 *   pnpm turbo run build --filter=@contextblocks/bench^...
 *   cd bench && node --import tsx src/search-speed.ts             # 20k and 100k, SQLite and Postgres
 *   cd bench && node --import tsx src/search-speed.ts --smoke     # 2k only
 *   cd bench && node --import tsx src/search-speed.ts --sqlite    # SQLite only (--postgres: Postgres only)
 *   cd bench && node --import tsx src/search-speed.ts --postgres --unnamed   # ours sent unnamed, as before
 *                                                                           # named prepared statements
 */
import { performance } from "node:perf_hooks";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { PostgresSearchProvider } from "@contextblocks/postgres";
import { fromPg } from "@contextblocks/sql";
import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import Database from "better-sqlite3";
import pg from "pg";
import { markdownTable } from "./markdown.js";
import { corpora, random } from "./search-corpora.js";
import { PostgresSearchFloor, SqliteSearchFloor } from "./search-floor.js";

const smoke = process.argv.includes("--smoke");
const sizes = smoke ? [2_000] : [20_000, 100_000];
const queryCount = smoke ? 50 : 300;
/** Postgres searches of the Zipf corpus take tens of milliseconds each (thousands of matches): fewer queries. */
const postgresQueryCount = smoke ? 50 : 100;
/** `--unnamed`: our statements parsed and planned on every call (`namedStatements: false`). */
const unnamed = process.argv.includes("--unnamed");
const backends = process.argv.includes("--sqlite")
  ? ["sqlite"]
  : process.argv.includes("--postgres")
    ? ["postgres"]
    : ["sqlite", "postgres"];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** One index pair under test: ours and the floor, holding the same entries. */
interface Pair {
  add(key: string, content: string): Promise<void>;
  /** Runs the fill (one transaction on SQLite, as a bulk import would be). */
  fill(run: () => Promise<void>): Promise<void>;
  ours(query: string): Promise<unknown>;
  floor(query: string): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Medians of ours and the floor over the same queries, timed in turns: whichever runs second finds the query's
 * posting lists warm in the CPU caches, so each goes first for half of them. Round 0 is the warm-up.
 */
async function timePaired(pair: Pair, queries: string[]): Promise<[number, number]> {
  const ours: number[] = [];
  const floor: number[] = [];
  for (const round of [0, 1, 2]) {
    for (const [index, query] of queries.entries()) {
      const oursFirst = (index + round) % 2 === 0;
      const start = performance.now();
      await (oursFirst ? pair.ours(query) : pair.floor(query));
      const middle = performance.now();
      await (oursFirst ? pair.floor(query) : pair.ours(query));
      const end = performance.now();
      if (round > 0) {
        ours.push(oursFirst ? middle - start : end - middle);
        floor.push(oursFirst ? end - middle : middle - start);
      }
    }
  }
  return [median(ours), median(floor)];
}

function sqlitePair(): Pair {
  const database = new Database(":memory:");
  const provider = new Fts5SearchProvider(database, { label: "speed" });
  const floor = new SqliteSearchFloor(database);
  return {
    async add(key, content) {
      await provider.set(key, content);
      floor.add(key, content);
    },
    async fill(run) {
      database.exec("BEGIN");
      await run();
      database.exec("COMMIT");
    },
    ours: (query) => provider.search(query),
    floor: async (query) => floor.search(query),
    async close() {
      database.close();
    },
  };
}

async function postgresPair(cluster: ThrowawayCluster, name: string): Promise<Pair> {
  const connection = new pg.Client({ connectionString: cluster.connectionString });
  await connection.connect();
  await connection.query(`DROP SCHEMA IF EXISTS ${name} CASCADE; CREATE SCHEMA ${name}`);
  await connection.query(`SET search_path TO ${name}`);
  const provider = new PostgresSearchProvider(fromPg(connection, { namedStatements: !unnamed }), {
    label: "speed",
  });
  const floor = new PostgresSearchFloor(connection);
  await floor.create();
  return {
    async add(key, content) {
      await provider.set(key, content);
      await floor.add(key, content);
    },
    async fill(run) {
      await run();
      // Both tables as autovacuum leaves them once a load settles (statistics, GIN pending lists merged):
      // otherwise the first searches after the load race autovacuum, on either side, run to run.
      await connection.query("VACUUM ANALYZE");
    },
    ours: (query) => provider.search(query),
    floor: (query) => floor.search(query),
    async close() {
      await connection.query(`DROP SCHEMA ${name} CASCADE`);
      await connection.end();
    },
  };
}

async function measure(
  backend: string,
  open: () => Promise<Pair>,
  rows: string[][],
  queries = queryCount,
): Promise<void> {
  for (const corpus of corpora) {
    for (const size of sizes) {
      process.stderr.write(`search-speed: ${backend}, ${corpus.name}, ${size} entries\n`);
      const pair = await open();
      const next = random(size);
      await pair.add("warm", "warm");
      await pair.fill(async () => {
        for (let index = 0; index < size; index++) await pair.add(`e${index}`, corpus.entry(next));
      });
      for (const words of corpus.queryWords) {
        const asked = Array.from({ length: queries }, () => corpus.query(next, words));
        const [ours, floor] = await timePaired(pair, asked);
        process.stderr.write(
          `  ${words} words: ours ${(ours * 1000).toFixed(0)} µs, floor ${(floor * 1000).toFixed(0)} µs\n`,
        );
        rows.push([
          backend,
          corpus.name,
          size.toLocaleString("en"),
          String(words),
          `${(ours * 1000).toFixed(0)} µs`,
          `${(floor * 1000).toFixed(0)} µs`,
          `${(ours / floor).toFixed(2)}×`,
        ]);
      }
      await pair.close();
    }
  }
}

async function main(): Promise<void> {
  const rows: string[][] = [];
  if (backends.includes("sqlite")) {
    await measure("SQLite", async () => sqlitePair(), rows);
  }
  const notes: string[] = [];
  if (backends.includes("postgres")) {
    let cluster: ThrowawayCluster | undefined;
    try {
      cluster = await startThrowawayCluster();
      // A run stopped from outside still stops its server.
      const started = cluster;
      process.once("SIGTERM", () => {
        started.stop();
        process.exit(143);
      });
    } catch (error) {
      notes.push(`Postgres skipped: ${(error as Error).message.split("\n")[0]}`);
    }
    if (cluster !== undefined) {
      try {
        let schema = 0;
        await measure(
          "Postgres",
          () => postgresPair(cluster as ThrowawayCluster, `speed_${schema++}`),
          rows,
          postgresQueryCount,
        );
      } finally {
        cluster.stop();
      }
    }
  }
  console.log(
    markdownTable(
      [
        "backend",
        "corpus",
        "entries",
        "query words",
        "our search",
        "floor (plain table, one statement)",
        "ours / floor (goal ≤ 1.5× SQLite, ≤ 2× Postgres)",
      ],
      rows,
    ),
  );
  for (const note of notes) console.log(`\n${note}`);
}

await main();
