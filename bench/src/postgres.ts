/**
 * @contextblocks/postgres beside the SQLite providers, in the same run:
 *
 * 1. Latency per operation and round trips per turn: the same scripted operations on better-sqlite3 (a WAL
 *    file; `SqliteContextProvider`, `Fts5SearchProvider`) and on Postgres (a throwaway local cluster over
 *    TCP through one `pg.Client`; `PostgresContextProvider`, `PostgresSearchProvider`). Postgres figures
 *    include the network stack of 127.0.0.1; through Hyperdrive add one Worker-to-pool hop per round trip.
 * 2. Session operations: `appendMessage` and `getHistory` at 100 and 1,000 messages, `SqliteSessionStore`
 *    beside `PostgresSessionStore` on the same two connections (round trips: an append is one statement).
 * 3. Retrieval on the LoCoMo dev split (`<repo>/../shared/bench-data/locomo-dev`, skipped when absent): per
 *    conversation a fresh index, one entry per turn (key = `dia_id`, content = `"<speaker>: <text>"`), every
 *    question with evidence is one search, a hit is any evidence turn among the first 10 results.
 *
 * Skips with a notice when no PostgreSQL server can be started here (no initdb).
 *
 *   pnpm turbo run build --filter=@contextblocks/bench^...
 *   cd bench && node --import tsx src/postgres.ts            # full
 *   cd bench && node --import tsx src/postgres.ts --smoke    # seconds
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ContextBlocks, type ContextConfig, type ContextProvider } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import {
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionStore,
} from "@contextblocks/postgres";
import type { SessionMessage } from "@contextblocks/sessions";
import { MessageTree, type SessionStore } from "@contextblocks/sessions/store-kit";
import { fromBetterSqlite3, fromPg, type SqlClient } from "@contextblocks/sql";
import { SqliteContextProvider, SqliteSessionStore } from "@contextblocks/sqlite";
import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import Database from "better-sqlite3";
import pg from "pg";
import { locomoSessionTime } from "./locomo-time.js";
import { median } from "./statistics.js";

const smoke = process.argv.includes("--smoke");
/** `--locomo`: only the LoCoMo retrieval tables. */
const locomoOnly = process.argv.includes("--locomo");
/** The LoCoMo dev split: `LOCOMO_DIRECTORY`, else `<repo>/../shared/bench-data/locomo-dev`. */
const locomoDirectory =
  process.env.LOCOMO_DIRECTORY === undefined
    ? new URL("../../../shared/bench-data/locomo-dev/", import.meta.url)
    : new URL(`file://${process.env.LOCOMO_DIRECTORY.replace(/\/?$/, "/")}`);

/** One storage backend under test: how to open a client, and how to make each provider on it. */
interface Backend {
  readonly name: string;
  /** Statements (SQLite) or round trips to the server (Postgres) since the last reset. */
  readonly calls: { count: number };
  readonly client: SqlClient;
  context(label: string): ContextProvider & { set(content: string): Promise<void> };
  search(label: string): ContextProvider & {
    set(key: string, content: string): Promise<void>;
    search(query: string): Promise<string | null>;
  };
  session(sessionId: string): SessionStore;
  close(): Promise<void>;
}

function sqliteBackend(directory: string): Backend {
  const database = new Database(join(directory, "bench.sqlite"));
  database.pragma("journal_mode = WAL");
  const calls = { count: 0 };
  const client = fromBetterSqlite3(database, { onStatement: () => calls.count++ });
  return {
    name: "SQLite (better-sqlite3)",
    calls,
    client,
    context: (label) => new SqliteContextProvider(client, label),
    search: (label) => new Fts5SearchProvider(client, { label }),
    // Read through the message tree, as a `Session` reads it.
    session: (sessionId) => new MessageTree(new SqliteSessionStore(client, sessionId)),
    close: async () => {
      database.close();
    },
  };
}

async function postgresBackend(cluster: ThrowawayCluster): Promise<Backend> {
  const connection = new pg.Client({ connectionString: cluster.connectionString });
  await connection.connect();
  // Every query() call of the driver is one round trip to the server (BEGIN and COMMIT included).
  const calls = { count: 0 };
  const counted = {
    connect: () => connection.connect(),
    query: (text: string, values?: unknown[]) => {
      calls.count++;
      return connection.query(text, values);
    },
  };
  const client = fromPg(counted);
  return {
    name: "Postgres (pg.Client, 127.0.0.1)",
    calls,
    client,
    context: (label) => new PostgresContextProvider(client, label),
    search: (label) => new PostgresSearchProvider(client, { label }),
    session: (sessionId) => new MessageTree(new PostgresSessionStore(client, sessionId)),
    close: () => connection.end(),
  };
}

// ─── 1. Latency per operation, round trips per turn ────────────────────────────────────────────────

const KNOWLEDGE = [
  "The ferry to the island leaves at nine and returns before dusk.",
  "Mia is allergic to peanuts and always carries an epinephrine pen.",
  "The solar panel inverter on the barn roof was replaced in May.",
  "Volunteers spent Saturday planting seedlings along the riverbank trail.",
  "The quartz countertop needs resealing once every year.",
];
const QUESTIONS = [
  "When does the ferry leave?",
  "What is Mia allergic to?",
  "Which part of the roof was replaced?",
];

interface OperationFigures {
  readonly name: string;
  readonly milliseconds: number;
  readonly calls: number;
}

async function timeEach(
  backend: Backend,
  name: string,
  iterations: number,
  operation: (iteration: number) => Promise<unknown>,
): Promise<OperationFigures> {
  const times: number[] = [];
  await operation(-1); // warm-up (creates tables, prepares statements)
  backend.calls.count = 0;
  for (let iteration = 0; iteration < iterations; iteration++) {
    const start = performance.now();
    await operation(iteration);
    times.push(performance.now() - start);
  }
  return { name, milliseconds: median(times), calls: backend.calls.count / iterations };
}

function blocks(backend: Backend, agent: string): ContextConfig[] {
  return [
    { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
    {
      label: "memory",
      description: "Short facts",
      maxTokens: 1100,
      provider: backend.context(`memory_${agent}`),
    },
    {
      label: "knowledge",
      description: "Searchable knowledge base",
      provider: backend.search(`knowledge_${agent}`),
    },
  ];
}

async function operations(backend: Backend): Promise<OperationFigures[]> {
  const iterations = smoke ? 5 : 200;
  const memory = backend.context("bench_memory");
  const knowledge = backend.search("bench_knowledge");
  await memory.set("The user likes tea.");
  for (const [index, text] of KNOWLEDGE.entries()) await knowledge.set(`kb-${index}`, text);
  for (let index = 0; index < (smoke ? 20 : 500); index++) {
    await knowledge.set(
      `filler-${index}`,
      `Filler note ${index}: the weekly report lists item ${index % 37}.`,
    );
  }
  const figures = [
    await timeEach(backend, "block get", iterations, () => memory.get()),
    await timeEach(backend, "block set (changed content)", iterations, (i) => memory.set(`fact ${i}`)),
    await timeEach(backend, "entry set", iterations, (i) =>
      knowledge.set(`note-${i % 50}`, `A note, version ${i}.`),
    ),
    await timeEach(backend, "entry count (get)", iterations, () => knowledge.get()),
    await timeEach(backend, "search (a question)", iterations, (i) =>
      knowledge.search(QUESTIONS[Math.abs(i) % QUESTIONS.length] as string),
    ),
  ];

  // A turn as an agent runs it: warm frozen prompt, one memory append, one indexed note, one search, the
  // reminder check. And a cold start: a new ContextBlocks serving the stored prompt.
  const agent = "turns";
  const context = new ContextBlocks(blocks(backend, agent), backend.context(`_prompt_${agent}`));
  await context.freezeSystemPrompt();
  figures.push(
    await timeEach(backend, "a turn (append, note, search, reminder)", smoke ? 3 : 50, async (i) => {
      await context.freezeSystemPrompt();
      await context.appendToBlock("memory", ` Fact ${i}.`);
      await context.setEntry("knowledge", `turn-${i}`, `On turn ${i} the user mentioned the ferry.`);
      await context.search("knowledge", "What did the user say about the ferry?");
      await context.reminder();
    }),
    await timeEach(backend, "a cold start (stored prompt)", smoke ? 3 : 50, async () => {
      const cold = new ContextBlocks(blocks(backend, agent), backend.context(`_prompt_${agent}`));
      await cold.freezeSystemPrompt();
    }),
  );
  return figures;
}

// ─── 2. Session operations ─────────────────────────────────────────────────────────────────────────

const sessionWords =
  "deploy release friday budget review design meeting latency cache index query summary".split(" ");

/** A chat-sized message (40 words). */
function chatMessage(id: string, index: number): SessionMessage {
  const text = Array.from(
    { length: 40 },
    (_, position) => sessionWords[Math.abs(index * 7 + position * 3) % sessionWords.length],
  ).join(" ");
  return { id, role: index % 2 === 0 ? "user" : "assistant", parts: [{ type: "text", text }] };
}

async function sessionOperations(backend: Backend): Promise<OperationFigures[]> {
  const sizes = smoke ? [100] : [100, 1_000];
  const iterations = smoke ? 5 : 100;
  const figures: OperationFigures[] = [];
  for (const size of sizes) {
    const provider = backend.session(`bench-${size}`);
    for (let index = 0; index < size; index++)
      await provider.appendMessage(chatMessage(`s${size}-m${index}`, index));
    figures.push(
      await timeEach(backend, `appendMessage at ${size} messages`, iterations, async (i) =>
        provider.appendMessage(chatMessage(`s${size}-extra-${i}`, i)),
      ),
      await timeEach(backend, `getHistory at ${size} messages`, smoke ? 3 : 20, async () =>
        provider.getHistory(),
      ),
    );
  }
  return figures;
}

function operationsTable(sqlite: readonly OperationFigures[], postgres: readonly OperationFigures[]): string {
  const lines = [
    "| operation | SQLite ms (median) | SQLite statements | Postgres ms (median) | Postgres round trips | Postgres / SQLite |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const [index, ours] of postgres.entries()) {
    const local = sqlite[index];
    if (local === undefined) continue;
    lines.push(
      `| ${ours.name} | ${local.milliseconds.toFixed(3)} | ${local.calls.toFixed(1)} | ${ours.milliseconds.toFixed(3)} | ${ours.calls.toFixed(1)} | ${(ours.milliseconds / local.milliseconds).toFixed(1)}× |`,
    );
  }
  return lines.join("\n");
}

// ─── 3. LoCoMo retrieval ───────────────────────────────────────────────────────────────────────────

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  /** Its session's date and time, given to session stores as the message's `createdAt`. */
  time?: Date | undefined;
}
interface Qa {
  question: string;
  evidence?: string[];
  category: number | string;
}
interface Conversation {
  readonly id: string;
  readonly turns: Turn[];
  readonly questions: Qa[];
}

function readConversations(): Conversation[] {
  const files = readdirSync(locomoDirectory)
    .filter((name) => name.endsWith(".json"))
    .sort();
  return (smoke ? files.slice(0, 1) : files).map((file) => {
    const data = JSON.parse(readFileSync(new URL(file, locomoDirectory), "utf8")) as Record<string, unknown>;
    const turns: Turn[] = [];
    for (const [name, value] of Object.entries(data)) {
      if (!/^session_\d+$/.test(name) || !Array.isArray(value)) continue;
      const time = locomoSessionTime(data[`${name}_date_time`]);
      for (const turn of value as Turn[]) turns.push({ ...turn, time });
    }
    const questions = ((data.qa as Qa[] | undefined) ?? []).filter(
      (qa) => Array.isArray(qa.evidence) && qa.evidence.length > 0,
    );
    return { id: file.replace(/\.json$/, ""), turns, questions: smoke ? questions.slice(0, 20) : questions };
  });
}

interface RetrievalFigures {
  questions: number;
  hits: number;
  reciprocalRank: number;
  byCategory: Map<string, { questions: number; hits: number }>;
  searchMilliseconds: number[];
}

async function retrieval(
  conversations: readonly Conversation[],
  open: (conversation: Conversation) => Promise<{
    provider: {
      set(key: string, content: string, time?: Date): Promise<void>;
      search(query: string): Promise<string | null>;
    };
    close(): Promise<void>;
    /** A session store: each turn is appended with its session's time. */
    timed?: boolean;
  }>,
): Promise<RetrievalFigures> {
  const figures: RetrievalFigures = {
    questions: 0,
    hits: 0,
    reciprocalRank: 0,
    byCategory: new Map(),
    searchMilliseconds: [],
  };
  for (const conversation of conversations) {
    const { provider, close, timed } = await open(conversation);
    for (const turn of conversation.turns) {
      const content = `${turn.speaker}: ${turn.text}`;
      await (timed === true
        ? provider.set(turn.dia_id, content, turn.time)
        : provider.set(turn.dia_id, content));
    }
    for (const qa of conversation.questions) {
      const start = performance.now();
      const result = await provider.search(qa.question);
      figures.searchMilliseconds.push(performance.now() - start);
      const keys = [...(result ?? "").matchAll(/^\[([^\]\n]*)\]$/gm)].map((match) => match[1]).slice(0, 10);
      const position = keys.findIndex((key) => key !== undefined && (qa.evidence ?? []).includes(key));
      const category = String(qa.category);
      const bucket = figures.byCategory.get(category) ?? { questions: 0, hits: 0 };
      bucket.questions++;
      figures.questions++;
      if (position >= 0) {
        figures.hits++;
        bucket.hits++;
        figures.reciprocalRank += 1 / (position + 1);
      }
      figures.byCategory.set(category, bucket);
    }
    await close();
  }
  return figures;
}

/** A session store as a retrieval provider: `set` appends the turn (id = key), `search` lists ids as `[id]` lines. */
function sessionAsProvider(
  store: SessionStore,
  prefix: string,
): {
  set(key: string, content: string, time?: Date): Promise<void>;
  search(query: string): Promise<string | null>;
} {
  let turns = 0;
  return {
    async set(key, content, time) {
      await store.appendMessage({
        id: `${prefix}${key}`,
        role: turns++ % 2 === 0 ? "user" : "assistant",
        parts: [{ type: "text", text: content }],
        ...(time === undefined ? {} : { createdAt: time }),
      });
    },
    async search(query) {
      const hits = (await store.searchMessages?.(query, 10)) ?? [];
      return hits.map((hit) => `[${hit.id.slice(prefix.length)}]`).join("\n");
    },
  };
}

/**
 * `retrieval`'s opener for a session store per conversation (`locomo-<id>`, every turn appended with its time),
 * each kept in `stores` for the paired pass.
 */
function sessionsKeptIn(
  stores: Map<string, SessionStore>,
  storeOf: (sessionId: string) => ConstructorParameters<typeof MessageTree>[0],
) {
  return async (conversation: Conversation) => {
    const store = new MessageTree(storeOf(`locomo-${conversation.id}`));
    stores.set(conversation.id, store);
    return { provider: sessionAsProvider(store, `${conversation.id}:`), close: async () => {}, timed: true };
  };
}

/** Each question searched on both session stores, one after the other, the order alternating (milliseconds). */
async function pairedSearches(
  conversations: readonly Conversation[],
  sqlite: ReadonlyMap<string, SessionStore>,
  postgres: ReadonlyMap<string, SessionStore>,
): Promise<{ sqlite: number[]; postgres: number[] }> {
  const times = { sqlite: [] as number[], postgres: [] as number[] };
  for (const conversation of conversations) {
    const stores = { sqlite: sqlite.get(conversation.id), postgres: postgres.get(conversation.id) };
    for (const qa of conversation.questions) {
      const order =
        times.sqlite.length % 2 === 0 ? (["sqlite", "postgres"] as const) : (["postgres", "sqlite"] as const);
      for (const which of order) {
        const start = performance.now();
        await stores[which]?.searchMessages?.(qa.question, 10);
        times[which].push(performance.now() - start);
      }
    }
  }
  return times;
}

function retrievalTable(rows: readonly [string, RetrievalFigures][]): string {
  const categories = [...new Set(rows.flatMap(([, figures]) => [...figures.byCategory.keys()]))].sort();
  const lines = [
    `| provider | questions | hit@10 | MRR@10 | ${categories.map((category) => `category ${category}`).join(" | ")} | search ms (median) |`,
    `|---|---:|---:|---:|${categories.map(() => "---:").join("|")}|---:|`,
  ];
  for (const [name, figures] of rows) {
    const perCategory = categories.map((category) => {
      const bucket = figures.byCategory.get(category);
      return bucket === undefined ? "" : (bucket.hits / bucket.questions).toFixed(3);
    });
    lines.push(
      `| ${name} | ${figures.questions} | ${(figures.hits / figures.questions).toFixed(3)} | ${(figures.reciprocalRank / figures.questions).toFixed(3)} | ${perCategory.join(" | ")} | ${median(figures.searchMilliseconds).toFixed(2)} |`,
    );
  }
  return lines.join("\n");
}

// ─── main ──────────────────────────────────────────────────────────────────────────────────────────

async function main(): Promise<void> {
  let cluster: ThrowawayCluster;
  try {
    cluster = await startThrowawayCluster();
  } catch (error) {
    console.log(
      `Postgres benchmark skipped: no PostgreSQL server could be started here (${firstLine(error)}).`,
    );
    return;
  }
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-bench-postgres-"));
  try {
    if (!locomoOnly) {
      const sqlite = sqliteBackend(directory);
      const postgres = await postgresBackend(cluster);
      const sqliteFigures = await operations(sqlite);
      const postgresFigures = await operations(postgres);
      const sqliteSessions = await sessionOperations(sqlite);
      const postgresSessions = await sessionOperations(postgres);
      await sqlite.close();
      await postgres.close();
      console.log("#### Latency per operation and round trips per turn\n");
      console.log(operationsTable(sqliteFigures, postgresFigures));
      console.log("\n#### Session operations (SqliteSessionStore, PostgresSessionStore)\n");
      console.log(operationsTable(sqliteSessions, postgresSessions));
    }

    console.log("\n#### LoCoMo dev retrieval (hit@10 by evidence turn)\n");
    if (!existsSync(locomoDirectory)) {
      console.log("LoCoMo retrieval skipped: ../shared/bench-data/locomo-dev is not on this machine.");
      return;
    }
    const conversations = readConversations();
    const fts5 = await retrieval(conversations, async () => {
      const database = new Database(":memory:");
      const provider = new Fts5SearchProvider(database, { label: "locomo" });
      return {
        provider: {
          set: (key: string, content: string) => provider.set(key, content),
          search: (query: string) => provider.search(query),
        },
        close: async () => {
          database.close();
        },
      };
    });
    const postgresRetrieval = await retrieval(conversations, async (conversation) => {
      const connection = new pg.Client({ connectionString: cluster.connectionString });
      await connection.connect();
      // A fresh label per conversation: PostgresSearchProvider counts term frequencies within the label.
      return {
        provider: new PostgresSearchProvider(connection, { label: `locomo-${conversation.id}` }),
        close: () => connection.end(),
      };
    });
    // Session search: every turn one message appended in order, one session per conversation, all in one
    // database (as a server holds many sessions), searched with `searchMessages(question, 10)`.
    const sqliteDatabase = new Database(join(directory, "locomo-sessions.sqlite"));
    sqliteDatabase.pragma("journal_mode = WAL");
    const sqliteSessionClient = fromBetterSqlite3(sqliteDatabase);
    const sqliteStores = new Map<string, SessionStore>();
    const sqliteSession = await retrieval(
      conversations,
      sessionsKeptIn(sqliteStores, (id) => new SqliteSessionStore(sqliteSessionClient, id)),
    );
    const sessionConnection = new pg.Client({ connectionString: cluster.connectionString });
    await sessionConnection.connect();
    const postgresStores = new Map<string, SessionStore>();
    const postgresSession = await retrieval(
      conversations,
      sessionsKeptIn(postgresStores, (id) => new PostgresSessionStore(sessionConnection, id)),
    );
    // Every question again on both, one after the other, the order alternating: the ratio of two servers that
    // have been answering, paired so the machine's load weighs on both alike.
    const paired = await pairedSearches(conversations, sqliteStores, postgresStores);
    sqliteDatabase.close();
    await sessionConnection.end();
    console.log(
      retrievalTable([
        [
          "SqliteSessionStore.searchMessages (FTS5: text, turns before, turns after at query time, day, speaker)",
          sqliteSession,
        ],
        ["PostgresSessionStore.searchMessages (tsvector: the same fields and ranking)", postgresSession],
        ["Fts5SearchProvider (better-sqlite3)", fts5],
        ["PostgresSearchProvider (tsvector, GIN)", postgresRetrieval],
      ]),
    );
    console.log(
      `\nSession search, Postgres / SQLite median time: ${(median(postgresSession.searchMilliseconds) / median(sqliteSession.searchMilliseconds)).toFixed(1)}× on the first pass above (each backend in turn); ${median(paired.postgres).toFixed(2)} / ${median(paired.sqlite).toFixed(2)} ms (${(median(paired.postgres) / median(paired.sqlite)).toFixed(2)}×) on a second pass, each question on both, paired.`,
    );
    console.log(
      `\n${conversations.length} conversations, ${conversations.reduce((sum, c) => sum + c.turns.length, 0)} turns indexed.`,
    );
  } finally {
    cluster.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
}

await main();
