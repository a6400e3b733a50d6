/**
 * `@contextblocks/sessions` against `agents/experimental/memory/session` (agents@0.22.0, installed as
 * `agents-session`) and `agents/sessions` (agents@0.32.0), on better-sqlite3 through their own hosts, same
 * messages:
 *
 * 1. `appendMessage` and `getHistory` time by session length (median per operation; ratio theirs/ours),
 *    all three systems (agents@0.32.0 on a `ctx.storage`-shaped host over better-sqlite3).
 * 2. Heap growth reading a bounded window (`getRecentHistory`) of a 10,000-message session.
 * 3. `session.search` hit@10 and MRR on LoCoMo dev (`LOCOMO_DIRECTORY`, else `../shared/bench-data/locomo-dev`; skipped with a
 *    notice when absent).
 *
 *   cd bench && node --import tsx src/sessions.ts [--smoke]
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { sqliteBackend } from "@contextblocks/sqlite";
import { Session as AnchorSession } from "agents-session/experimental/memory/session";
import Database from "better-sqlite3";
import { agentsSessionsOn } from "./agents-sessions-host.js";
import { betterSqlite3Host } from "./agents-sql.js";
import { locomoDirectory } from "./locomo-data.js";

const smoke = process.argv.includes("--smoke");
const sizes = smoke ? [50, 200] : [100, 1_000, 5_000];
const timedAppends = smoke ? 10 : 50;
const timedReads = smoke ? 3 : 10;
const wakeSize = smoke ? 1_000 : 10_000;

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

interface Store {
  name: string;
  append(message: SessionMessage): Promise<void>;
  history(): Promise<SessionMessage[]>;
  recent(maxBytes: number, minMessages: number): Promise<{ messages: SessionMessage[] }>;
  search(query: string, limit: number): Promise<{ id: string }[]>;
  close(): void;
}

function ours(): Store {
  const database = new Database(":memory:");
  const session = new SessionBuilder(sqliteBackend(database)).forSession("bench").build();
  return {
    name: "contextblocks",
    append: (message) => session.appendMessage(message),
    history: () => session.getHistory(),
    recent: (maxBytes, minMessages) => session.getRecentHistory(maxBytes, minMessages),
    search: (query, limit) => session.search(query, { limit }),
    close: () => database.close(),
  };
}

function anchor(): Store {
  const database = new Database(":memory:");
  const session = AnchorSession.create(betterSqlite3Host(database) as never).forSession("bench");
  return {
    name: "agents",
    append: (message) => session.appendMessage(message as never),
    history: () => session.getHistory() as Promise<SessionMessage[]>,
    recent: (maxBytes, minMessages) =>
      session.getRecentHistory(maxBytes, minMessages) as Promise<{ messages: SessionMessage[] }>,
    search: (query, limit) => session.search(query, { limit }),
    close: () => database.close(),
  };
}

/** agents@0.32.0's `Sessions` (`agents/sessions`); set up by `onStart`, as its `Lifecycle` does. */
async function agents032(): Promise<Store> {
  const database = new Database(":memory:");
  const sessions = agentsSessionsOn(database);
  await sessions.onStart();
  const session = sessions.session("bench");
  return {
    name: "agents@0.32.0",
    append: async (message) => {
      await session.appendMessage(message as never);
    },
    history: async () => (await session.getHistory()) as unknown as SessionMessage[],
    recent: async (maxBytes) =>
      (await session.getRecentHistory(maxBytes as never)) as unknown as { messages: SessionMessage[] },
    search: async (query, limit) => (await session.search(query, { limit })) as { id: string }[],
    close: () => database.close(),
  };
}

const words = "deploy release friday budget review design meeting latency cache index query summary".split(
  " ",
);

function turn(index: number): SessionMessage {
  const text = Array.from(
    { length: 40 },
    (_, position) => words[(index * 7 + position * 3) % words.length],
  ).join(" ");
  return { id: `m${index}`, role: index % 2 === 0 ? "user" : "assistant", parts: [{ type: "text", text }] };
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const format = (milliseconds: number) =>
  milliseconds < 1 ? `${(milliseconds * 1000).toFixed(0)} µs` : `${milliseconds.toFixed(2)} ms`;

/**
 * One unmeasured session per system first: the first system measured in a cold process otherwise pays the
 * JIT's warm-up and its modules' first use (the 100-message row once showed ours at 136 µs per append
 * against 18 µs at 1,000 messages, only because it ran first).
 */
async function warmUp(): Promise<void> {
  for (const make of [ours, anchor, agents032]) {
    const store = await make();
    for (let index = 0; index < 200; index++) await store.append(turn(index));
    for (let read = 0; read < 5; read++) await store.history();
    store.close();
  }
}

async function timing(): Promise<string> {
  const rows = ["| messages | system | appendMessage | getHistory |", "|---:|---|---:|---:|"];
  const ratios: string[] = [];
  await warmUp();
  for (const size of sizes) {
    const figures = new Map<string, { append: number; history: number }>();
    for (const make of [ours, anchor, agents032]) {
      const store = await make();
      for (let index = 0; index < size; index++) await store.append(turn(index));
      const appends: number[] = [];
      for (let index = size; index < size + timedAppends; index++) {
        const started = performance.now();
        await store.append(turn(index));
        appends.push(performance.now() - started);
      }
      const reads: number[] = [];
      for (let read = 0; read < timedReads; read++) {
        const started = performance.now();
        const history = await store.history();
        reads.push(performance.now() - started);
        if (history.length !== size + timedAppends)
          throw new Error(`${store.name}: ${history.length} messages read`);
      }
      figures.set(store.name, { append: median(appends), history: median(reads) });
      rows.push(`| ${size} | ${store.name} | ${format(median(appends))} | ${format(median(reads))} |`);
      store.close();
    }
    const mine = figures.get("contextblocks");
    for (const [name, label] of [
      ["agents", "agents@0.22.0"],
      ["agents@0.32.0", "agents@0.32.0"],
    ] as const) {
      const theirs = figures.get(name);
      if (mine && theirs) {
        ratios.push(
          `| ${size} | ${label} | ${(theirs.append / mine.append).toFixed(1)}× | ${(theirs.history / mine.history).toFixed(1)}× |`,
        );
      }
    }
  }
  return [
    "### Time per operation (median), better-sqlite3 in memory",
    "",
    ...rows,
    "",
    "Ratio theirs/ours (above 1: contextblocks is faster; `agents` is agents@0.22.0):",
    "",
    "| messages | against | appendMessage | getHistory |",
    "|---:|---|---:|---:|",
    ...ratios,
  ].join("\n");
}

async function wake(): Promise<string> {
  const rows = ["| system | messages returned | heap growth during the read |", "|---|---:|---:|"];
  for (const make of [ours, anchor]) {
    const store = make();
    for (let index = 0; index < wakeSize; index++) await store.append(turn(index));
    collect();
    const before = process.memoryUsage().heapUsed;
    const result = await store.recent(64 * 1024, 10);
    const grown = process.memoryUsage().heapUsed - before;
    rows.push(`| ${store.name} | ${result.messages.length} | ${(grown / 1024).toFixed(0)} kB |`);
    store.close();
  }
  return [
    `### Waking on a ${wakeSize}-message session: getRecentHistory(64 kB, 10)`,
    "",
    "Heap used right after the call minus before it (collected first, no collection between): what the read",
    "allocated, including what it threw away.",
    "",
    ...rows,
  ].join("\n");
}

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
}

interface Question {
  question: string;
  evidence?: string[];
}

async function retrieval(): Promise<string> {
  const directory = fileURLToPath(locomoDirectory);
  if (!existsSync(directory)) {
    return "### Search on LoCoMo dev\n\nSkipped: ../shared/bench-data/locomo-dev (or LOCOMO_DIRECTORY) is not present.";
  }
  const files = readdirSync(directory)
    .filter((file) => file.endsWith(".json"))
    .sort();
  const totals = new Map<string, { questions: number; hits: number; reciprocal: number }>();
  for (const file of smoke ? files.slice(0, 1) : files) {
    const data = JSON.parse(readFileSync(`${directory}${file}`, "utf8")) as Record<string, unknown>;
    const turns = Object.keys(data)
      .filter((key) => /^session_\d+$/.test(key))
      .sort((left, right) => Number(left.slice(8)) - Number(right.slice(8)))
      .flatMap((key) => data[key] as Turn[]);
    const questions = (data.qa as Question[]).filter((question) => (question.evidence ?? []).length > 0);
    for (const make of [ours, anchor]) {
      const store = make();
      for (const [index, entry] of turns.entries()) {
        await store.append({
          id: entry.dia_id,
          role: index % 2 === 0 ? "user" : "assistant",
          parts: [{ type: "text", text: `${entry.speaker}: ${entry.text}` }],
        });
      }
      const total = totals.get(store.name) ?? { questions: 0, hits: 0, reciprocal: 0 };
      for (const question of smoke ? questions.slice(0, 20) : questions) {
        const results = (await store.search(question.question, 10)).map((hit) => hit.id);
        const rank = results.findIndex((id) => question.evidence?.includes(id));
        total.questions++;
        if (rank >= 0) {
          total.hits++;
          total.reciprocal += 1 / (rank + 1);
        }
      }
      totals.set(store.name, total);
      store.close();
    }
  }
  const rows = [...totals].map(
    ([name, total]) =>
      `| ${name} | ${total.questions} | ${(total.hits / total.questions).toFixed(3)} | ${(total.reciprocal / total.questions).toFixed(3)} |`,
  );
  return [
    `### session.search on LoCoMo dev${smoke ? " (smoke: one conversation, 20 questions)" : ""}`,
    "",
    "Every turn is one message (`<speaker>: <text>`); a hit is an evidence turn among the first 10 results.",
    "",
    "| system | questions | hit@10 | MRR |",
    "|---|---:|---:|---:|",
    ...rows,
  ].join("\n");
}

const parts = [await timing(), await wake(), await retrieval()];
process.stdout.write(`${parts.join("\n\n")}\n`);
