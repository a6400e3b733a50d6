/**
 * Whether a change to the Postgres knowledge search statement (packages/postgres/src/search-statement.ts) keeps
 * its results: the statement as a git revision has it ("before") and as the working tree has it ("after") run
 * on the same entries of search-speed.ts's corpora, and every query must return the same keys in the same
 * order. Queries: the corpus's own (as search-speed.ts asks them) and runs of words cut from stored entries (so
 * exact phrases and adjacent pairs occur). Each corpus is also searched after adding entries whose keys hold
 * query words, with `searchKeys` on and off, and at limits 10 and 3. Prints the count of differing queries
 * (0 expected) and the median time of each statement, run in turns. Then the LoCoMo dev split (when it is on
 * this machine, locomo-data.ts), as bench/src/postgres.ts searches it: per conversation a label, every turn
 * one entry (key = its `dia_id`, content = `"<speaker>: <text>"`), every question with evidence one search
 * (limit 10, keys searched, the provider's defaults); every result must be the same, ids and order.
 *
 * The "before" statement is sent unnamed (`namedStatements: false`: parsed and planned with its values on every
 * call), the working tree's through the default adapter (a named prepared statement: after five runs of a
 * text Postgres may keep one generic plan for it), so the comparison covers how statements are sent too.
 *
 *   cd bench && node --import tsx src/search-equality.ts                      # against main, 20k entries
 *   cd bench && node --import tsx src/search-equality.ts --before HEAD~1 --entries 100000 --queries 100
 *   cd bench && node --import tsx src/search-equality.ts --corpus zipf                         # one corpus
 *   cd bench && node --import tsx src/search-equality.ts --corpus locomo               # LoCoMo questions only
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PostgresSearchProvider } from "@contextblocks/postgres";
import { fromPg, type SqlStatement } from "@contextblocks/sql";
import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import { planQuery, type QueryPlan } from "@contextblocks/text";
import pg from "pg";
import { readLocomo } from "./locomo-data.js";
import { type Corpus, corpora, random } from "./search-corpora.js";

type Statement = (label: string, plan: QueryPlan, limit: number, searchKeys: boolean) => SqlStatement;

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

const before = option("--before", "main");
const size = Number(option("--entries", "20000"));
const queryCount = Number(option("--queries", "200"));
const only = option("--corpus", "");
const label = "equality";
const statementPath = "packages/postgres/src/search-statement.ts";
const root = fileURLToPath(new URL("../../", import.meta.url));

/** The statement as the revision has it, written beside the bench's output so its imports resolve. */
async function statementAt(revision: string): Promise<Statement> {
  const text = execFileSync("git", ["show", `${revision}:${statementPath}`], { cwd: root, encoding: "utf8" });
  const directory = fileURLToPath(new URL("../out/", import.meta.url));
  mkdirSync(directory, { recursive: true });
  const file = `${directory}search-statement-${revision.replace(/[^A-Za-z0-9]/g, "_")}.ts`;
  writeFileSync(file, text);
  return ((await import(pathToFileURL(file).href)) as { searchStatement: Statement }).searchStatement;
}

async function workingStatement(): Promise<Statement> {
  const file = pathToFileURL(`${root}${statementPath}`).href;
  return ((await import(file)) as { searchStatement: Statement }).searchStatement;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Runs of 2 to 6 words cut from entries the generator makes again (same seed as the fill). */
function cutQueries(corpus: Corpus, count: number): string[] {
  const next = random(size);
  const entries = Array.from({ length: Math.min(size, 2_000) }, () => corpus.entry(next));
  const pick = random(7);
  return Array.from({ length: count }, () => {
    const words = (entries[Math.floor(pick() * entries.length)] ?? "").split(" ");
    const length = 2 + Math.floor(pick() * 5);
    const start = Math.floor(pick() * (words.length - length));
    return words.slice(start, start + length).join(" ");
  });
}

const cluster = await startThrowawayCluster();
process.once("SIGTERM", () => {
  cluster.stop();
  process.exit(143);
});
const connection = new pg.Client({ connectionString: cluster.connectionString });
let differing = 0;
try {
  await connection.connect();
  const old = await statementAt(before);
  const current = await workingStatement();
  for (const corpus of corpora.filter((corpus) => only === "" || corpus.name === only)) {
    // A schema per corpus, and a client per schema (a client remembers the tables it has created).
    await connection.query(`CREATE SCHEMA ${corpus.name}; SET search_path TO ${corpus.name}`);
    const client = fromPg(connection);
    const clients = [fromPg(connection, { namedStatements: false }), client];
    await new PostgresSearchProvider(client, { label }).set("warm", "warm");
    // The same entries as search-speed.ts's fill, written in batches.
    const next = random(size);
    for (let start = 0; start < size; start += 5_000) {
      const keys: string[] = [];
      const contents: string[] = [];
      for (let index = start; index < Math.min(size, start + 5_000); index++) {
        keys.push(`e${index}`);
        contents.push(corpus.entry(next));
      }
      await connection.query(
        `INSERT INTO cf_agents_search_entries (label, key, content)
         SELECT $1, key, content FROM unnest($2::text[], $3::text[]) AS given(key, content)`,
        [label, keys, contents],
      );
    }
    await connection.query("VACUUM ANALYZE cf_agents_search_entries");
    const asked = [
      ...Array.from({ length: queryCount / 2 }, (_, index) =>
        corpus.query(next, corpus.queryWords[index % corpus.queryWords.length] ?? 3),
      ),
      ...cutQueries(corpus, queryCount / 2),
    ];
    for (const keyed of [false, true]) {
      if (keyed) {
        // Entries found by their key too: keys of two or three query-like words.
        const keyNext = random(size + 1);
        for (let index = 0; index < 300; index++) {
          const key = corpus.query(keyNext, 2 + (index % 2)).replaceAll(" ", "-");
          await connection.query(
            `INSERT INTO cf_agents_search_entries (label, key, content) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING`,
            [label, key, corpus.entry(keyNext)],
          );
        }
        await connection.query("ANALYZE cf_agents_search_entries");
      }
      for (const [searchKeys, limit] of [
        [true, 10],
        [false, 10],
        [true, 3],
      ] as const) {
        const times: [number[], number[]] = [[], []];
        let differ = 0;
        for (const [index, query] of asked.entries()) {
          const plan = planQuery(query);
          if (plan === null) continue;
          const statements = [old, current].map((build) => build(label, plan, limit, searchKeys));
          const results: string[] = ["", ""];
          for (const turn of [0, 1]) {
            const which = (index + turn) % 2;
            const statement = statements[which] as SqlStatement;
            const start = performance.now();
            const rows = await (clients[which] ?? client).run<{ key: string; content: string }>(statement);
            times[which]?.push(performance.now() - start);
            results[which] = JSON.stringify(rows.map((row) => [row.key, row.content]));
          }
          if (results[0] !== results[1]) {
            differ++;
            if (differ <= 3) process.stderr.write(`  differs: ${JSON.stringify(query)}\n`);
          }
        }
        differing += differ;
        const [oldTimes, newTimes] = times;
        console.log(
          `${corpus.name} ${size} ${keyed ? "+keyed" : "plain"} searchKeys=${searchKeys} limit=${limit}: ` +
            `${asked.length} queries, ${differ} differ; median ${before} ${median(oldTimes).toFixed(2)} ms, ` +
            `working tree ${median(newTimes).toFixed(2)} ms`,
        );
      }
    }
  }
  const conversations = only === "" || only === "locomo" ? readLocomo() : [];
  if (conversations === null) console.log("LoCoMo: skipped (the dev split is not on this machine)");
  else if (conversations.length > 0) {
    await connection.query("CREATE SCHEMA locomo; SET search_path TO locomo");
    const client = fromPg(connection);
    const clients = [fromPg(connection, { namedStatements: false }), client];
    await new PostgresSearchProvider(client, { label: "warm" }).set("warm", "warm");
    let questions = 0;
    let differ = 0;
    for (const conversation of conversations) {
      const conversationLabel = `locomo_${conversation.name}`;
      await connection.query(
        `INSERT INTO cf_agents_search_entries (label, key, content)
         SELECT $1, key, content FROM unnest($2::text[], $3::text[]) AS given(key, content)
         ON CONFLICT DO NOTHING`,
        [
          conversationLabel,
          conversation.turns.map((turn) => turn.dia_id),
          conversation.turns.map((turn) => `${turn.speaker}: ${turn.text}`),
        ],
      );
      for (const question of conversation.questions) {
        const plan = planQuery(question.question);
        if (plan === null) continue;
        const [before, after] = await Promise.all(
          [old, current].map(async (build, which) =>
            JSON.stringify(await (clients[which] ?? client).run(build(conversationLabel, plan, 10, true))),
          ),
        );
        questions++;
        if (before !== after) {
          differ++;
          if (differ <= 3) process.stderr.write(`  differs: ${JSON.stringify(question.question)}\n`);
        }
      }
    }
    differing += differ;
    console.log(`LoCoMo: ${conversations.length} conversations, ${questions} questions, ${differ} differ`);
  }
} finally {
  await connection.end();
  cluster.stop();
}
console.log(differing === 0 ? "same results in the same order" : `${differing} queries differ`);
process.exitCode = differing === 0 ? 0 : 1;
