/**
 * Where a wake's CPU time goes, one system per process: the batches of bench/src/latency.ts's "cold freeze,
 * prompt stored (new instance)" and "construct the instance and cold freeze" rows (a forced full collection
 * before each batch; 40 calls at 10 blocks, 5 at 200), timed as latency.ts times them (the whole process's CPU
 * time), and split into the main thread's CPU time and every other thread's (V8's optimizing compiler and the
 * collector's helpers), read from `/proc/self/task/<thread>/schedstat` (Linux only) before and after each batch;
 * the main thread's share is the process's time less theirs.
 *
 * Why: latency.ts charges a system the background compiles its code triggers. After each forced collection,
 * optimized code that embedded object shapes which died with the last instance is thrown away and compiled again
 * in the next batch (see docs/wake-cost.md, "A fifth look" and "A seventh look"). One system per process, so
 * neither system's compiles land in the other's batches.
 *
 *   cd bench && node --import tsx src/wake-threads.ts --system=contextblocks|agents [--blocks=200] [--rounds=30]
 */
import { readdirSync, readFileSync } from "node:fs";
import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import {
  AgentContextProvider,
  ContextBlocks as AgentsContextBlocks,
  type ContextConfig as AgentsContextConfig,
} from "agents/context";
import Database from "better-sqlite3";
import { betterSqlite3Host } from "./agents-sql.js";
import { collectGarbage } from "./collect-garbage.js";
import { knowledgeEntry } from "./corpus.js";
import { median } from "./statistics.js";

const argument = (name: string, fallback: string) =>
  process.argv.find((value) => value.startsWith(`--${name}=`))?.split("=")[1] ?? fallback;
const system = argument("system", "contextblocks");
const blocks = Number(argument("blocks", "200"));
const rounds = Number(argument("rounds", "30"));
const calls = blocks > 50 ? 5 : 40;
if (system !== "contextblocks" && system !== "agents") {
  throw new Error(`--system must be contextblocks or agents, got ${system}`);
}

interface Wake {
  freezeSystemPrompt(): Promise<string>;
  setBlock(label: string, content: string): Promise<unknown>;
}

function blockConfigs<Provider>(count: number, provider: (label: string) => Provider) {
  return Array.from({ length: count }, (_, index) => {
    const label = `block_${index}`;
    return { label, description: `Block number ${index}`, maxTokens: 1_000, provider: provider(label) };
  });
}

const database = new Database(":memory:");
const host = betterSqlite3Host(database);
const create: () => Wake =
  system === "contextblocks"
    ? () =>
        new ContextBlocks(
          blockConfigs(blocks, (label) => new SqliteContextProvider(database, label)) as ContextConfig[],
          new SqliteContextProvider(database, "_system_prompt"),
        )
    : () =>
        new AgentsContextBlocks(
          blockConfigs(blocks, (label) => new AgentContextProvider(host, label)) as AgentsContextConfig[],
          new AgentContextProvider(host, "_system_prompt"),
        );

// Seeded in a function: no instance outlives it (an instance kept alive keeps its shapes, and code, alive).
async function seed(): Promise<void> {
  const context = create();
  for (let index = 0; index < blocks; index += 1) {
    await context.setBlock(`block_${index}`, knowledgeEntry(index).content);
  }
  await context.freezeSystemPrompt();
}
await seed();

/** Nanoseconds on a CPU so far of every thread of this process but the main one. */
function otherThreadsTime(): number {
  let total = 0;
  for (const thread of readdirSync("/proc/self/task")) {
    if (Number(thread) === process.pid) continue;
    try {
      total += Number(readFileSync(`/proc/self/task/${thread}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return total;
}

function processCpu(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** Microseconds per call: the process, its main thread, its other threads (medians over the rounds). */
async function measure(
  prepare: () => Wake | undefined,
  operation: (prepared: Wake | undefined) => Promise<unknown>,
) {
  const times = { process: [] as number[], main: [] as number[], others: [] as number[] };
  for (let round = 0; round <= rounds; round += 1) {
    await create().freezeSystemPrompt();
    const prepared: (Wake | undefined)[] = [];
    for (let call = 0; call < calls; call += 1) prepared.push(prepare());
    collectGarbage();
    // A running thread's own schedstat lags (it is brought up to date at a tick or a switch), so the main
    // thread's time is the process's (getrusage counts the calling thread exactly) less the others'.
    const othersBefore = otherThreadsTime();
    const start = processCpu();
    for (const value of prepared) await operation(value);
    const processTime = processCpu() - start;
    const othersAfter = otherThreadsTime();
    if (round === 0) continue; // One untimed round first, as latency.ts.
    times.process.push(processTime / calls);
    const others = (othersAfter - othersBefore) / 1_000;
    times.main.push((processTime - others) / calls);
    times.others.push(others / calls);
  }
  return { process: median(times.process), main: median(times.main), others: median(times.others) };
}

const rows = {
  "cold freeze, prompt stored (new instance)": await measure(create, (context) =>
    (context as Wake).freezeSystemPrompt(),
  ),
  "construct the instance and cold freeze": await measure(
    () => undefined,
    () => create().freezeSystemPrompt(),
  ),
};
console.log(
  `${system}, ${blocks} blocks, ${calls} calls per batch, medians of ${rounds} batches (µs per call):\n`,
);
console.log("| row | process CPU | main thread | other threads |");
console.log("| --- | ---: | ---: | ---: |");
for (const [row, figures] of Object.entries(rows)) {
  console.log(
    `| ${row} | ${figures.process.toFixed(1)} | ${figures.main.toFixed(1)} | ${figures.others.toFixed(1)} |`,
  );
}
