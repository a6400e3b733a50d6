/**
 * What the prompt path's steps cost, one at a time, on the blocks of bench/src/latency.ts (10 or 200 stored
 * blocks of about 100 tokens, better-sqlite3 in memory): the SQLite read every system pays, and each check
 * and step contextblocks adds around it. Process CPU time (see latency.ts), the median of several batches.
 *
 * Run alone: `node --import tsx src/latency-breakdown.ts [--smoke] [--blocks=10,200]`.
 */
import { pathToFileURL } from "node:url";
import { ContextBlocks, type ContextConfig, estimateTokens } from "@contextblocks/core";
import { isWellFormed } from "@contextblocks/core/store-kit";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import { AgentContextProvider } from "agents/context";
import Database from "better-sqlite3";
// Internals, read from core's build: they are not exported, and are measured here only.
import { detectDrift, expectedHeader, findDrift } from "../../packages/core/dist/drift.js";
import {
  configurationFingerprint,
  foldHashes,
  promptFingerprint,
} from "../../packages/core/dist/fingerprint.js";
import { parseHeaders, renderPrompt } from "../../packages/core/dist/prompt-format.js";
import { betterSqlite3Host } from "./agents-sql.js";
import { knowledgeEntry } from "./corpus.js";
import { formatDuration, markdownTable } from "./markdown.js";
import { median } from "./statistics.js";

interface BreakdownRow {
  step: string;
  /** Milliseconds per call, by block count. */
  times: number[];
}

function cpuClock(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1_000;
}

/** Median milliseconds per call over `runs` batches of `calls` calls (one untimed batch first). */
async function cost(runs: number, calls: number, operation: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run <= runs; run += 1) {
    const start = cpuClock();
    for (let call = 0; call < calls; call += 1) await operation();
    if (run > 0) times.push((cpuClock() - start) / calls);
  }
  return median(times);
}

async function stepsFor(count: number, runs: number): Promise<Array<[string, number]>> {
  const database = new Database(":memory:");
  const configs = () =>
    Array.from({ length: count }, (_, index) => ({
      label: `block_${index}`,
      description: `Block number ${index}`,
      maxTokens: 1_000,
      provider: new SqliteContextProvider(database, `block_${index}`),
    })) as ContextConfig[];
  const promptStore = new SqliteContextProvider(database, "_system_prompt");
  const seed = new ContextBlocks(configs(), promptStore);
  for (let index = 0; index < count; index += 1)
    await seed.setBlock(`block_${index}`, knowledgeEntry(index).content);
  const prompt = await seed.freezeSystemPrompt();
  const resolved = seed.getConfigs();
  const expected = resolved.map((config) => expectedHeader(config));
  const configurationKey = configurationFingerprint(foldHashes(expected.map((header) => header.hash)));
  const storedFingerprint = (promptStore.getWithFingerprint() as { fingerprint: string | null }).fingerprint;
  const blocks = seed.getBlocks();
  const contents = blocks.map((block) => block.content);
  const calls = count > 50 ? 20 : 400;
  const select = database.prepare("SELECT content FROM cf_agents_context_blocks WHERE label = ?");
  // The same row as bytes: better-sqlite3 then skips V8's UTF-8 decoder, and Node decodes them instead.
  const selectBytes = database
    .prepare("SELECT CAST(content AS BLOB) FROM cf_agents_context_blocks WHERE label = ?")
    .pluck();
  const decoder = new TextDecoder();
  const agentsHost = betterSqlite3Host(database);
  const agentsPromptStore = new AgentContextProvider(agentsHost, "_system_prompt");
  const labels = Array.from({ length: count }, (_, index) => `block_${index}`);
  const built = configs();
  // The same prompt with every character past ASCII (the rules' `═`, the usage's `—`) as `=`: the read's
  // cost without turning UTF-8 with such characters into a JavaScript string, which both systems pay.
  database
    .prepare("INSERT INTO cf_agents_context_blocks (label, content) VALUES (?, ?)")
    .run("_ascii_prompt", prompt.replace(/[^\u0000-\u007f]/g, "="));
  return [
    [
      "read the stored prompt: better-sqlite3 alone (both systems pay it)",
      await cost(runs, calls, () => select.all("_system_prompt")),
    ],
    [
      "read the same prompt with its non-ASCII characters as `=` (the read without decoding them)",
      await cost(runs, calls, () => select.all("_ascii_prompt")),
    ],
    [
      "read the stored prompt as bytes (`CAST(content AS BLOB)`), no decoding",
      await cost(runs, calls, () => selectBytes.get("_system_prompt")),
    ],
    [
      "read the stored prompt as bytes and decode them (`Buffer#toString('utf8')`)",
      await cost(runs, calls, () => (selectBytes.get("_system_prompt") as Buffer).toString("utf8")),
    ],
    [
      "read the stored prompt as bytes and decode them (`TextDecoder`)",
      await cost(runs, calls, () => decoder.decode(selectBytes.get("_system_prompt") as Buffer)),
    ],
    ["read the stored prompt: `SqliteContextProvider.get`", await cost(runs, calls, () => promptStore.get())],
    [
      "read the stored prompt: `SqliteContextProvider.getSync`",
      await cost(runs, calls, () => promptStore.getSync()),
    ],
    [
      "read the stored prompt with its fingerprint: `getWithFingerprint` (what a cold start calls)",
      await cost(runs, calls, () => promptStore.getWithFingerprint()),
    ],
    [
      "read the stored prompt: agents' `AgentContextProvider.get`",
      await cost(runs, calls, () => agentsPromptStore.get()),
    ],
    [
      "drift check: find the stored prompt's headers (`parseHeaders`)",
      await cost(runs, calls, () => parseHeaders(prompt)),
    ],
    [
      "drift check: whole, headers worked out per call (`detectDrift`)",
      await cost(runs, calls, () => detectDrift(prompt, resolved)),
    ],
    [
      "drift check: whole, as a cold start runs it (`findDrift`, the registry's headers, compared in place)",
      await cost(runs, calls, () => findDrift(prompt, expected)),
    ],
    [
      "drift check by the stored fingerprint (`promptFingerprint`, what a wake runs when it matches)",
      await cost(runs, calls, () => promptFingerprint(configurationKey, prompt) === storedFingerprint),
    ],
    [
      "construct one store per block: `new SqliteContextProvider(database, label)`",
      await cost(runs, calls, () => labels.map((label) => new SqliteContextProvider(database, label))),
    ],
    [
      "construct one store per block: agents' `new AgentContextProvider(host, label)`",
      await cost(runs, calls, () => labels.map((label) => new AgentContextProvider(agentsHost, label))),
    ],
    [
      "construct `ContextBlocks` (validate every config, clash checks, fold the configuration's fingerprint)",
      await cost(runs, calls, () => new ContextBlocks(built, promptStore)),
    ],
    [
      "count tokens of every block (`estimateTokens`)",
      await cost(runs, calls, () => contents.map(estimateTokens)),
    ],
    [
      "render the prompt (`renderPrompt`, structure rule on every block)",
      await cost(runs, calls, () => renderPrompt(blocks)),
    ],
    ["check the prompt is storable (`isWellFormed`)", await cost(runs, calls, () => isWellFormed(prompt))],
  ];
}

export async function run(
  options: { smoke?: boolean; blockCounts?: number[] } = {},
): Promise<{ rows: BreakdownRow[]; markdown: string }> {
  const counts = options.smoke ? [10] : (options.blockCounts ?? [10, 200]);
  const runs = options.smoke ? 1 : 9;
  const rows: BreakdownRow[] = [];
  for (const [column, count] of counts.entries()) {
    for (const [row, [step, time]] of (await stepsFor(count, runs)).entries()) {
      rows[row] ??= { step, times: [] };
      (rows[row] as BreakdownRow).times[column] = time;
    }
  }
  const table = markdownTable(
    ["step", ...counts.map((count) => `${count} blocks`)],
    rows.map((row) => [row.step, ...row.times.map(formatDuration)]),
    1,
  );
  const markdown = [
    `CPU time per call, median of ${runs} batch(es). A cold freeze is the prompt read (synchronous, ` +
      "`getWithFingerprint`) plus the drift check (the fingerprint's comparison when it matches, else the " +
      "header check); a first freeze and a refresh read every block, count tokens " +
      "where the content changed, render, check and store.",
    "",
    table,
  ].join("\n");
  return { rows, markdown };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const blocks = process.argv.find((argument) => argument.startsWith("--blocks="));
  const result = await run({
    smoke: process.argv.includes("--smoke"),
    ...(blocks ? { blockCounts: blocks.slice("--blocks=".length).split(",").map(Number) } : {}),
  });
  console.log(result.markdown);
}
