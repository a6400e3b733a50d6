/**
 * Where a Postgres search's time goes: parsing and planning its statement, or running it. For the knowledge
 * search (`PostgresSearchProvider`, the random corpus of search-corpora.ts at 20,000 entries, 3- and 5-word
 * queries) beside its floor (search-floor.ts), and for the session search (`postgresBackend`, every LoCoMo
 * conversation in one session) beside its floor (session-search-scale.ts's bare statement):
 *
 * - server side, `EXPLAIN (ANALYZE, SUMMARY)` of each statement as sent: Planning Time and Execution Time;
 *   then the same statement `PREPARE`d once and `EXPLAIN (ANALYZE, SUMMARY) EXECUTE`d under each
 *   `plan_cache_mode` (a custom plan per call, the generic plan, and Postgres's own choice after five calls);
 * - wall clock through node-postgres: the statement sent unnamed (parsed and planned every call) beside the
 *   same text sent with a name (parsed once per connection), the searches in turns.
 *
 * Medians over the queries, in milliseconds, after `VACUUM ANALYZE` (the GIN indexes' pending lists flushed).
 *
 *   cd bench && node --import tsx src/postgres-search-planning.ts [--smoke] [--knowledge | --sessions]
 */
import { performance } from "node:perf_hooks";
import { PostgresSearchProvider, postgresBackend } from "@contextblocks/postgres";
import { SessionBuilder } from "@contextblocks/sessions";
import { fromPg, type SqlValue } from "@contextblocks/sql";
import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import { planQuery } from "@contextblocks/text";
import pg from "pg";
import { readLocomo } from "./locomo-data.js";
import { markdownTable } from "./markdown.js";
import { corpora, random } from "./search-corpora.js";
import { floorTsquery } from "./search-floor.js";
import { median } from "./statistics.js";

const smoke = process.argv.includes("--smoke");
const only = ["knowledge", "sessions"].filter((name) => process.argv.includes(`--${name}`));
const parts = only.length > 0 ? only : ["knowledge", "sessions"];
const entries = smoke ? 2_000 : 20_000;
const queriesPerShape = smoke ? 5 : 20;
/** Executions of each prepared statement before the one explained: past Postgres's five custom plans. */
const warmExecutions = 7;

/** One statement as a store sent it. */
interface Sent {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** A node-postgres client that remembers the statements sent through it. */
function recording(client: pg.Client): { source: pg.Client; sent: Sent[] } {
  const sent: Sent[] = [];
  const source = new Proxy(client, {
    get(target, property) {
      if (property === "query") {
        return (textOrConfig: string | pg.QueryConfig, values?: unknown[]) => {
          // The adapter sends named statements as `{ name, text, values }`.
          if (typeof textOrConfig === "string") sent.push({ text: textOrConfig, values: values ?? [] });
          else sent.push({ text: textOrConfig.text, values: textOrConfig.values ?? [] });
          return target.query(textOrConfig as string, values);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { source, sent };
}

/** A value as an SQL literal, for `EXECUTE name(…)`. */
function literal(client: pg.Client, value: unknown): string {
  if (value === null) return "NULL";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  return client.escapeLiteral(String(value));
}

interface Explained {
  planning: number;
  execution: number;
}

async function explain(client: pg.Client, text: string, values: readonly unknown[]): Promise<Explained> {
  const result = await client.query(`EXPLAIN (ANALYZE, SUMMARY, FORMAT JSON) ${text}`, [...values]);
  const plan = (result.rows[0] as { "QUERY PLAN": { "Planning Time": number; "Execution Time": number }[] })[
    "QUERY PLAN"
  ][0];
  return {
    planning: plan?.["Planning Time"] ?? Number.NaN,
    execution: plan?.["Execution Time"] ?? Number.NaN,
  };
}

const modes = ["force_custom_plan", "force_generic_plan", "auto"] as const;

/** Server-side figures of one statement: as sent, and prepared under each plan cache mode. */
async function serverSide(client: pg.Client, statement: Sent): Promise<Record<string, Explained>> {
  const figures: Record<string, Explained> = {};
  await explain(client, statement.text, statement.values);
  figures.unnamed = await explain(client, statement.text, statement.values);
  const execute = `EXECUTE planned(${statement.values.map((value) => literal(client, value)).join(", ")})`;
  for (const mode of modes) {
    await client.query(`SET plan_cache_mode = ${mode}`);
    await client.query(`PREPARE planned AS ${statement.text}`);
    for (let run = 0; run < warmExecutions; run++) await client.query(execute);
    const result = await client.query(`EXPLAIN (ANALYZE, SUMMARY, FORMAT JSON) ${execute}`);
    const plan = (
      result.rows[0] as { "QUERY PLAN": { "Planning Time": number; "Execution Time": number }[] }
    )["QUERY PLAN"][0];
    figures[mode] = {
      planning: plan?.["Planning Time"] ?? Number.NaN,
      execution: plan?.["Execution Time"] ?? Number.NaN,
    };
    await client.query("DEALLOCATE planned");
  }
  await client.query("RESET plan_cache_mode");
  return figures;
}

/** Wall clock of the statement unnamed and named, in turns, each run a few times. */
async function wallClock(client: pg.Client, statement: Sent, name: string): Promise<[number, number]> {
  const unnamed: number[] = [];
  const named: number[] = [];
  for (let round = 0; round < 6; round++) {
    for (const which of round % 2 === 0 ? ["unnamed", "named"] : ["named", "unnamed"]) {
      const start = performance.now();
      if (which === "unnamed") await client.query(statement.text, [...statement.values]);
      else await client.query({ name, text: statement.text, values: [...statement.values] });
      if (round > 0) (which === "unnamed" ? unnamed : named).push(performance.now() - start);
    }
  }
  return [median(unnamed), median(named)];
}

/** Table rows for a list of (shape, ours, floor) statements. */
async function rowsFor(
  client: pg.Client,
  shapes: { shape: string; ours: Sent[]; floor: Sent[] }[],
): Promise<string[][]> {
  const rows: string[][] = [];
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (name === undefined) {
      name = `bench_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  for (const { shape, ours, floor } of shapes) {
    for (const [who, statements] of [
      ["ours", ours],
      ["floor", floor],
    ] as const) {
      const figures: Record<string, Explained[]> = {};
      const walls: [number[], number[]] = [[], []];
      for (const statement of statements) {
        for (const [mode, explained] of Object.entries(await serverSide(client, statement))) {
          figures[mode] = [...(figures[mode] ?? []), explained];
        }
        const [unnamed, named] = await wallClock(client, statement, nameOf(statement.text));
        walls[0].push(unnamed);
        walls[1].push(named);
      }
      const cell = (mode: string) => {
        const list = figures[mode] ?? [];
        const planning = median(list.map((figure) => figure.planning));
        const execution = median(list.map((figure) => figure.execution));
        return `${planning.toFixed(2)} + ${execution.toFixed(2)}`;
      };
      rows.push([
        shape,
        who,
        String(new Set(statements.map((statement) => statement.text)).size),
        cell("unnamed"),
        cell("force_custom_plan"),
        cell("force_generic_plan"),
        cell("auto"),
        `${median(walls[0]).toFixed(2)} / ${median(walls[1]).toFixed(2)}`,
      ]);
    }
  }
  return rows;
}

const header = [
  "queries",
  "statement",
  "distinct texts",
  "as sent: plan + run",
  "prepared, custom plan",
  "prepared, generic plan",
  "prepared, auto (after 5)",
  "wall: unnamed / named",
];

async function knowledge(connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query("CREATE SCHEMA planning; SET search_path TO planning");
  const { source, sent } = recording(client);
  const provider = new PostgresSearchProvider(fromPg(source), { label: "planning" });
  await client.query(`CREATE TABLE search_floor (key TEXT PRIMARY KEY, content TEXT NOT NULL,
    content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED);
    CREATE INDEX search_floor_fts ON search_floor USING GIN (content_tsv)`);
  const corpus = corpora.find((candidate) => candidate.name === "random");
  if (corpus === undefined) throw new Error("no random corpus");
  const next = random(entries);
  process.stderr.write(`postgres-search-planning: filling ${entries} entries\n`);
  for (let index = 0; index < entries; index++) {
    const content = corpus.entry(next);
    await provider.set(`e${index}`, content);
    await client.query("INSERT INTO search_floor (key, content) VALUES ($1, $2)", [`e${index}`, content]);
  }
  // Flushes the GIN indexes' pending lists, which a search otherwise scans whole: steadier execution times.
  await client.query("VACUUM ANALYZE");
  const shapes: { shape: string; ours: Sent[]; floor: Sent[] }[] = [];
  for (const words of corpus.queryWords) {
    const ours: Sent[] = [];
    const floor: Sent[] = [];
    for (let index = 0; index < queriesPerShape; index++) {
      const query = corpus.query(next, words);
      sent.length = 0;
      await provider.search(query);
      const statement = sent.find((candidate) => candidate.text.startsWith("WITH"));
      if (statement !== undefined) ours.push(statement);
      const text = floorTsquery(query);
      if (text !== null) {
        floor.push({
          text: `SELECT key, content FROM search_floor, to_tsquery('english', $1) AS query
       WHERE content_tsv @@ query ORDER BY ts_rank(content_tsv, query) DESC LIMIT 10`,
          values: [text],
        });
      }
    }
    shapes.push({ shape: `random ${entries.toLocaleString("en")}, ${words} words`, ours, floor });
  }
  process.stderr.write("postgres-search-planning: measuring knowledge search\n");
  const rows = await rowsFor(client, shapes);
  await client.end();
  return markdownTable(header, rows);
}

async function sessions(connectionString: string): Promise<string> {
  const conversations = readLocomo(smoke);
  if (conversations === null) return "Session search skipped: no LoCoMo data here.";
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query("CREATE SCHEMA sessions; SET search_path TO sessions");
  await client.query(`CREATE TABLE entries (key TEXT PRIMARY KEY, content TEXT NOT NULL,
    content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED);
    CREATE INDEX entries_fts ON entries USING GIN (content_tsv)`);
  const { source, sent } = recording(client);
  const session = new SessionBuilder(postgresBackend(source)).forSession("all").build();
  let count = 0;
  process.stderr.write("postgres-search-planning: appending the LoCoMo conversations\n");
  for (const conversation of conversations) {
    for (const turn of conversation.turns) {
      const id = `m${count++}`;
      const text = `${turn.speaker}: ${turn.text}`;
      await session.appendMessage({
        id,
        role: count % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text }],
      });
      await client.query("INSERT INTO entries (key, content) VALUES ($1, $2)", [id, text]);
    }
  }
  await session.search("warm up", { limit: 10 });
  await client.query("VACUUM ANALYZE");
  const questions = conversations
    .flatMap((conversation) => conversation.questions.map((question) => question.question))
    .filter((_, index) => index % 37 === 0)
    .slice(0, queriesPerShape * 2);
  const ours: Sent[] = [];
  const floor: Sent[] = [];
  for (const question of questions) {
    const plan = planQuery(question);
    if (plan === null) continue;
    sent.length = 0;
    await session.search(question, { limit: 10 });
    const statement = sent.find((candidate) => candidate.text.startsWith("WITH search_queries"));
    if (statement !== undefined) ours.push(statement);
    const words: SqlValue[] = plan.terms.map((term) => term.word);
    const query = words.map((_, index) => `plainto_tsquery('english', $${index + 1})`).join(" || ");
    floor.push({
      text: `SELECT key FROM entries, (SELECT ${query} AS query) given
           WHERE content_tsv @@ given.query ORDER BY ts_rank(content_tsv, given.query) DESC LIMIT 10`,
      values: words,
    });
  }
  process.stderr.write("postgres-search-planning: measuring session search\n");
  const rows = await rowsFor(client, [
    { shape: `LoCoMo, ${count.toLocaleString("en")} messages`, ours, floor },
  ]);
  await client.end();
  return markdownTable(header, rows);
}

const cluster = await startThrowawayCluster();
try {
  const sections = [
    "Milliseconds, medians over the queries; server side `planning + execution` from EXPLAIN (ANALYZE, SUMMARY).",
  ];
  if (parts.includes("knowledge")) sections.push("", await knowledge(cluster.connectionString));
  if (parts.includes("sessions")) sections.push("", await sessions(cluster.connectionString));
  console.log(sections.join("\n"));
} finally {
  cluster.stop();
}
