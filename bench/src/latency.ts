/**
 * Latency on better-sqlite3, contextblocks against `agents/context`, same data, same run.
 *
 * - Blocks (10 and 200 writable blocks stored in SQLite, plus the persisted prompt): re-render and store
 *   (`refreshSystemPrompt`), cold freeze with the prompt stored (a new instance, as after an eviction), first
 *   freeze with nothing stored, and warm freeze (a later call on the same instance).
 *
 * The search provider's timings at 1k / 10k / 100k entries come from bench/src/fts5-scale.ts (run-all puts
 * them in the same section), so they are not measured twice.
 *
 * Medians of several runs; the machine is shared and noisy, so read the ratios, not the absolute times.
 * Run alone: `node --import tsx src/latency.ts [--smoke] [--blocks=10,200]`.
 */
import { pathToFileURL } from "node:url";
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
import { formatDuration, formatRatio, markdownTable } from "./markdown.js";
import { median } from "./statistics.js";

export interface LatencyRow {
  group: string;
  operation: string;
  /** Median milliseconds per operation. */
  contextblocks: number;
  agents: number;
}

export interface LatencyResult {
  rows: LatencyRow[];
  markdown: string;
}

interface LatencySettings {
  blockCounts: number[];
  runs: number;
}

/** The parts of both libraries' `ContextBlocks` the block timings call. */
interface FreezingContext {
  freezeSystemPrompt(): Promise<string>;
  refreshSystemPrompt(): Promise<string>;
}

/** One system's way of building a context over its own database. */
interface BlockSystem {
  create(): FreezingContext;
  /** Removes the stored prompt, so the next freeze renders. */
  forgetPrompt(): void;
}

function blockContent(index: number): string {
  return knowledgeEntry(index).content;
}

function blockConfigs<Provider>(count: number, provider: (label: string) => Provider) {
  return Array.from({ length: count }, (_, index) => {
    const label = `block_${index}`;
    return { label, description: `Block number ${index}`, maxTokens: 1_000, provider: provider(label) };
  });
}

async function contextblocksBlocks(count: number): Promise<BlockSystem> {
  const database = new Database(":memory:");
  const create = () =>
    new ContextBlocks(
      blockConfigs(count, (label) => new SqliteContextProvider(database, label)) as ContextConfig[],
      new SqliteContextProvider(database, "_system_prompt"),
    );
  const seed = create();
  for (let index = 0; index < count; index += 1) await seed.setBlock(`block_${index}`, blockContent(index));
  return {
    create,
    forgetPrompt: () =>
      database.prepare("DELETE FROM cf_agents_context_blocks WHERE label = ?").run("_system_prompt"),
  };
}

async function agentsBlocks(count: number): Promise<BlockSystem> {
  const database = new Database(":memory:");
  const host = betterSqlite3Host(database);
  const create = () =>
    new AgentsContextBlocks(
      blockConfigs(count, (label) => new AgentContextProvider(host, label)) as AgentsContextConfig[],
      new AgentContextProvider(host, "_system_prompt"),
    );
  const seed = create();
  for (let index = 0; index < count; index += 1) await seed.setBlock(`block_${index}`, blockContent(index));
  return {
    create,
    forgetPrompt: () =>
      database.prepare("DELETE FROM cf_agents_context_blocks WHERE label = ?").run("_system_prompt"),
  };
}

/**
 * The process's CPU time in milliseconds (user + system, all threads). The machines these run on are shared:
 * wall-clock time counts the other tenants' bursts too, CPU time counts only the work of this process.
 * Both systems run synchronous better-sqlite3 in this process, so their whole cost is in it.
 */
function cpuClock(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1_000;
}

/** Milliseconds per call of `operation` over `calls` calls in a row on the values `prepare` made (untimed). */
async function timeBatch<T>(
  calls: number,
  prepare: () => T | Promise<T>,
  operation: (prepared: T) => unknown | Promise<unknown>,
): Promise<number> {
  const prepared: T[] = [];
  for (let call = 0; call < calls; call += 1) prepared.push(await prepare());
  collectGarbage();
  const start = cpuClock();
  for (const value of prepared) await operation(value);
  return (cpuClock() - start) / calls;
}

/** Milliseconds per call, each call timed alone after its own untimed `prepare` (for state a call uses up). */
async function timeEach<T>(
  calls: number,
  prepare: () => T | Promise<T>,
  operation: (prepared: T) => unknown | Promise<unknown>,
): Promise<number> {
  let total = 0;
  for (let call = 0; call < calls; call += 1) {
    const value = await prepare();
    if (call === 0) collectGarbage();
    const start = cpuClock();
    await operation(value);
    total += cpuClock() - start;
  }
  return total / calls;
}

/**
 * The median of `runs` timed rounds per system. The systems take turns within each round, and which goes
 * first alternates, so a burst of load on the shared machine falls on both alike. One untimed round first.
 */
async function paired(
  systems: Record<"contextblocks" | "agents", BlockSystem>,
  runs: number,
  measureOne: (system: BlockSystem) => Promise<number>,
): Promise<{ contextblocks: number; agents: number }> {
  const times = { contextblocks: [] as number[], agents: [] as number[] };
  for (let round = 0; round <= runs; round += 1) {
    const order =
      round % 2 === 0 ? (["contextblocks", "agents"] as const) : (["agents", "contextblocks"] as const);
    for (const name of order) {
      const time = await measureOne(systems[name]);
      if (round > 0) times[name].push(time);
    }
  }
  return { contextblocks: median(times.contextblocks), agents: median(times.agents) };
}

async function blockRows(count: number, runs: number): Promise<LatencyRow[]> {
  const systems = { contextblocks: await contextblocksBlocks(count), agents: await agentsBlocks(count) };
  const group = `${count} blocks`;
  const calls = count > 50 ? 5 : 40;

  const refresh = await paired(systems, runs, async (system) => {
    const context = system.create();
    await context.freezeSystemPrompt();
    return timeBatch(
      calls,
      () => context,
      (prepared) => prepared.refreshSystemPrompt(),
    );
  });
  const coldFreeze = await paired(systems, runs, async (system) => {
    await system.create().freezeSystemPrompt();
    return timeBatch(calls, system.create, (context) => context.freezeSystemPrompt());
  });
  const coldStart = await paired(systems, runs, async (system) => {
    await system.create().freezeSystemPrompt();
    return timeBatch(
      calls,
      () => undefined,
      () => system.create().freezeSystemPrompt(),
    );
  });
  const firstFreeze = await paired(systems, runs, (system) =>
    timeEach(
      calls,
      () => {
        system.forgetPrompt();
        return system.create();
      },
      (context) => context.freezeSystemPrompt(),
    ),
  );
  const warmFreeze = await paired(systems, runs, async (system) => {
    const context = system.create();
    await context.freezeSystemPrompt();
    return timeBatch(
      2_000,
      () => context,
      (prepared) => prepared.freezeSystemPrompt(),
    );
  });
  return [
    { group, operation: "re-render and store (`refreshSystemPrompt`)", ...refresh },
    { group, operation: "cold freeze, prompt stored (new instance)", ...coldFreeze },
    { group, operation: "construct the instance and cold freeze", ...coldStart },
    { group, operation: "first freeze, nothing stored (render + store)", ...firstFreeze },
    { group, operation: "warm freeze (same instance)", ...warmFreeze },
  ];
}

function verdict(row: LatencyRow): string {
  const ratio = row.agents / row.contextblocks;
  if (ratio < 0.95) return "**contextblocks behind**";
  if (ratio <= 1.05) return "par";
  return "contextblocks ahead";
}

export function latencyMarkdown(rows: readonly LatencyRow[], runs: number): string {
  const table = markdownTable(
    ["size", "operation", "contextblocks", "agents/context", "agents ÷ contextblocks", ""],
    rows.map((row) => [
      row.group,
      row.operation,
      formatDuration(row.contextblocks),
      formatDuration(row.agents),
      formatRatio(row.agents, row.contextblocks),
      verdict(row),
    ]),
    2,
  );
  const behind = rows.filter((row) => row.agents / row.contextblocks < 0.95);
  const summary =
    behind.length === 0
      ? "contextblocks is not behind on any row."
      : `**contextblocks is behind on ${behind.length} row(s):** ${behind
          .map((row) => `${row.group}, ${row.operation} (${formatRatio(row.agents, row.contextblocks)})`)
          .join("; ")}.`;
  return [
    `Median of ${runs} run(s) per figure, time per operation. A ratio above 1 means contextblocks is faster; ` +
      "within ±5% is called par.",
    "",
    table,
    "",
    summary,
  ].join("\n");
}

export async function run(options: { smoke?: boolean; blockCounts?: number[] } = {}): Promise<LatencyResult> {
  const settings: LatencySettings = options.smoke
    ? { blockCounts: [10], runs: 1 }
    : { blockCounts: options.blockCounts ?? [10, 200], runs: 9 };
  const rows: LatencyRow[] = [];
  for (const count of settings.blockCounts) rows.push(...(await blockRows(count, settings.runs)));
  return { rows, markdown: latencyMarkdown(rows, settings.runs) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const blocks = process.argv.find((argument) => argument.startsWith("--blocks="));
  const result = await run({
    smoke: process.argv.includes("--smoke"),
    ...(blocks ? { blockCounts: blocks.slice("--blocks=".length).split(",").map(Number) } : {}),
  });
  console.log(result.markdown);
}
