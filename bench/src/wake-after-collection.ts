/**
 * What a full garbage collection does to the next wakes' construction, contextblocks against `agents/context`:
 * `new ContextBlocks(...)` over N blocks (a store per block and the prompt store, configs built afresh as a
 * Durable Object's constructor builds them), timed right after a forced full collection and in steady state,
 * first with no instance of either system alive between wakes, then with one instance of each kept alive.
 *
 * Why: V8 keeps optimized code only while the object shapes (maps) it was compiled against are alive. When the
 * last instance of a class is collected, the shapes its constructor made can die with it, and the optimized
 * code that embeds them is thrown away ("marking dependent code … for deoptimization, reason: weak objects"
 * under `node --trace-deopt`); the next wakes run unoptimized and the code is compiled again on a background
 * thread. The more code a construction runs, the more this costs. Wall time on the main thread and CPU time of
 * the whole process (which counts the background compiles), medians over rounds of 6 constructions.
 *
 *   cd bench && node --import tsx src/wake-after-collection.ts [--blocks=200] [--rounds=60]
 */
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
import { median } from "./statistics.js";

const numberArgument = (name: string, fallback: number) =>
  Number(process.argv.find((argument) => argument.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const blocks = numberArgument("blocks", 200);
const rounds = numberArgument("rounds", 60);
const perRound = 6;

function configs<Provider>(provider: (label: string) => Provider) {
  return Array.from({ length: blocks }, (_, index) => {
    const label = `block_${index}`;
    return { label, description: `Block number ${index}`, maxTokens: 1_000, provider: provider(label) };
  });
}

const ourDatabase = new Database(":memory:");
const host = betterSqlite3Host(new Database(":memory:"));
const systems = {
  contextblocks: () =>
    new ContextBlocks(
      configs((label) => new SqliteContextProvider(ourDatabase, label)) as ContextConfig[],
      new SqliteContextProvider(ourDatabase, "_system_prompt"),
    ),
  "agents/context": () =>
    new AgentsContextBlocks(
      configs((label) => new AgentContextProvider(host, label)) as AgentsContextConfig[],
      new AgentContextProvider(host, "_system_prompt"),
    ),
};
type Name = keyof typeof systems;

/** Median wall and CPU microseconds per construction over `rounds` rounds. */
function measure(construct: () => unknown, afterCollection: boolean): { wall: number; cpu: number } {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if (afterCollection) collectGarbage();
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let call = 0; call < perRound; call++) construct();
    walls.push(((performance.now() - start) * 1_000) / perRound);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / perRound);
  }
  return { wall: median(walls), cpu: median(cpus) };
}

const format = (value: number) => `${value.toFixed(0)} µs`;
const rows: string[][] = [];
for (let warm = 0; warm < 200; warm++) for (const construct of Object.values(systems)) construct();
// Module-level, so the instances made for the second half stay alive to the end of the run.
const kept: unknown[] = [];
for (const keeping of [false, true]) {
  if (keeping) for (const construct of Object.values(systems)) kept.push(construct());
  for (const afterCollection of [true, false]) {
    const figures = {} as Record<Name, { wall: number; cpu: number }>;
    for (const name of Object.keys(systems) as Name[])
      figures[name] = measure(systems[name], afterCollection);
    const ours = figures.contextblocks;
    const anchor = figures["agents/context"];
    rows.push([
      keeping ? "one instance of each kept alive" : "no instance alive between wakes",
      afterCollection ? "right after a full collection" : "steady state",
      `${format(ours.wall)} / ${format(anchor.wall)} (${(anchor.wall / ours.wall).toFixed(2)}×)`,
      `${format(ours.cpu)} / ${format(anchor.cpu)} (${(anchor.cpu / ours.cpu).toFixed(2)}×)`,
    ]);
  }
}
console.log(
  `Construction of a context over ${blocks} blocks, contextblocks / agents/context (agents ÷ contextblocks):\n`,
);
console.log("| instances | when | wall, main thread | CPU, whole process |");
console.log("| --- | --- | ---: | ---: |");
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
