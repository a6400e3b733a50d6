/**
 * What `search_context` results cost against what they find: the prefix-cache session's input cost
 * (contextblocks ÷ agents/context, cached input at 0.1×) and LoCoMo hit@10 through the same tool path, for
 * several settings of the search provider behind the knowledge block (`Fts5SearchProvider`'s `limit`: results
 * per search; `resultTokens`: the excerpt budget of one result; `keyOnlyBelow`: results scoring below that
 * share of the best result's bm25 come back as their key alone, or with `weakResultTokens` of excerpt;
 * `dropBelow`: such results are left out).
 * `search_context` returns the provider's text as it is, so the provider's ranked keys are what the model
 * reads. "With text" counts a hit only when the answering turn came back with its text, not as a key alone.
 *
 * Run alone: `node --import tsx src/tool-result-curve.ts [--smoke]`.
 */
import { pathToFileURL } from "node:url";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import Database from "better-sqlite3";
import { type LocomoConversation, readLocomo, resultKeys } from "./locomo-data.js";
import { formatInteger, formatRatio, markdownTable } from "./markdown.js";
import { scriptedSession } from "./prefix-cache/session.js";
import { agentsSystem } from "./prefix-cache/systems/agents.js";
import { contextblocksSystem, type KnowledgeOptions } from "./prefix-cache/systems/contextblocks.js";
import { playSession, type SystemFigures } from "./prefix-cache.js";

interface Setting {
  name: string;
  options: KnowledgeOptions;
}

/**
 * The provider's defaults first (10 results, 40-token excerpts, weak matches below 0.9 of the best score with
 * 6-token excerpts), then the earlier defaults (8-token weak excerpts; weak matches below half the best as keys
 * alone; every result with text), other key-only and drop thresholds, other weak-match and result excerpts,
 * and fewer and shorter results.
 */
const SETTINGS: readonly Setting[] = [
  {
    name: "10 results, 40-token excerpts, 6-token excerpts below 0.9 of the best (default)",
    options: {},
  },
  {
    name: "10 results, 40-token excerpts, 8-token excerpts below 0.9 (the previous default)",
    options: { weakResultTokens: 8 },
  },
  {
    name: "10 results, 32-token excerpts, 8-token excerpts below 0.9",
    options: { resultTokens: 32, weakResultTokens: 8 },
  },
  {
    name: "10 results, 40-token excerpts, key only below 0.5 (the first default)",
    options: { keyOnlyBelow: 0.5, weakResultTokens: 0 },
  },
  { name: "10 results, 40-token excerpts, every result with text", options: { keyOnlyBelow: 0 } },
  {
    name: "10 results, 40-token excerpts, key only below 0.3",
    options: { keyOnlyBelow: 0.3, weakResultTokens: 0 },
  },
  {
    name: "10 results, 40-token excerpts, key only below 0.7",
    options: { keyOnlyBelow: 0.7, weakResultTokens: 0 },
  },
  {
    name: "10 results, 40-token excerpts, key only below 0.9",
    options: { keyOnlyBelow: 0.9, weakResultTokens: 0 },
  },
  {
    name: "10 results, 16-token excerpts, key only below 0.5",
    options: { resultTokens: 16, keyOnlyBelow: 0.5, weakResultTokens: 0 },
  },
  {
    name: "10 results, 40-token excerpts, 8-token excerpts below 0.5",
    options: { keyOnlyBelow: 0.5, weakResultTokens: 8 },
  },
  {
    name: "10 results, 40-token excerpts, 8-token excerpts below 0.7",
    options: { keyOnlyBelow: 0.7, weakResultTokens: 8 },
  },
  {
    name: "10 results, 32-token excerpts, 8-token excerpts below 0.7",
    options: { resultTokens: 32, keyOnlyBelow: 0.7, weakResultTokens: 8 },
  },
  {
    name: "10 results, 24-token excerpts, 8-token excerpts below 0.5",
    options: { resultTokens: 24, keyOnlyBelow: 0.5, weakResultTokens: 8 },
  },
  {
    name: "10 results, 24-token excerpts, 8-token excerpts below 0.7",
    options: { resultTokens: 24, keyOnlyBelow: 0.7, weakResultTokens: 8 },
  },
  {
    name: "10 results, 40-token excerpts, 10-token excerpts below 0.9",
    options: { keyOnlyBelow: 0.9, weakResultTokens: 10 },
  },
  {
    name: "10 results, 40-token excerpts, 10-token excerpts below 1",
    options: { keyOnlyBelow: 1, weakResultTokens: 10 },
  },
  { name: "10 results, 40-token excerpts, left out below 0.5", options: { keyOnlyBelow: 0, dropBelow: 0.5 } },
  {
    name: "10 results, 16-token excerpts, every result with text",
    options: { resultTokens: 16, keyOnlyBelow: 0 },
  },
  {
    name: "5 results, 24-token excerpts, every result with text",
    options: { limit: 5, resultTokens: 24, keyOnlyBelow: 0 },
  },
];

/** Input cost with the prefix cache, in uncached-token units. */
function cachedCost(figures: SystemFigures): number {
  return figures.inputTokens * figures.relativeCost;
}

async function hitAt10(conversations: readonly LocomoConversation[], options: KnowledgeOptions) {
  let questions = 0;
  let hits = 0;
  let withText = 0;
  for (const conversation of conversations) {
    const provider = new Fts5SearchProvider(new Database(":memory:"), { label: "turns", ...options });
    for (const turn of conversation.turns) await provider.set(turn.dia_id, `${turn.speaker}: ${turn.text}`);
    const keys = new Set(conversation.turns.map((turn) => turn.dia_id));
    for (const question of conversation.questions) {
      const result = await provider.search(question.question);
      const found = resultKeys(result, keys).slice(0, 10);
      questions += 1;
      const hit = found.find((key) => question.evidence.includes(key));
      if (hit === undefined) continue;
      hits += 1;
      if (result !== null && !keyAlone(result, hit)) withText += 1;
    }
  }
  return questions === 0
    ? { hit: Number.NaN, withText: Number.NaN }
    : { hit: hits / questions, withText: withText / questions };
}

/** Whether `key` came back as a key alone: its "[key]" line ends the result or a blank line follows it. */
function keyAlone(result: string, key: string): boolean {
  const end = result.indexOf(`[${key}]`) + key.length + 2;
  return end === result.length || result.startsWith("\n\n", end);
}

export async function run(options: { smoke?: boolean } = {}): Promise<{ markdown: string }> {
  const session = scriptedSession(options.smoke ? 8 : 50);
  const agents = await playSession(session, agentsSystem);
  const conversations = readLocomo(options.smoke);
  const rows: string[][] = [];
  for (const setting of options.smoke ? SETTINGS.slice(0, 2) : SETTINGS) {
    const ours = await playSession(session, (world) => contextblocksSystem(world, setting.options));
    const figures = conversations === null ? null : await hitAt10(conversations, setting.options);
    rows.push([
      setting.name,
      formatInteger(ours.toolResultTokens),
      formatInteger(ours.inputTokens),
      formatRatio(cachedCost(ours), cachedCost(agents)),
      figures === null ? "n/a" : figures.hit.toFixed(3),
      figures === null ? "n/a" : figures.withText.toFixed(3),
    ]);
  }
  const table = markdownTable(
    [
      "knowledge search setting",
      "tool-result tokens",
      "input tokens",
      "input cost ÷ agents/context",
      "LoCoMo hit@10 (tool path)",
      "hit@10 with text",
    ],
    rows,
    1,
  );
  return {
    markdown: [
      `The prefix-cache session (${session.turns.length} turns) with the knowledge block's search provider set as ` +
        "named; agents/context sends " +
        `${formatInteger(agents.inputTokens)} input tokens with ${formatInteger(agents.toolResultTokens)} ` +
        "tokens of tool results. Input cost with the cache (cached input at 0.1×); a ratio above 1 means " +
        "contextblocks pays more. LoCoMo hit@10: the answering turn among the search's keys, on the dev split" +
        (conversations === null ? " (not on this machine: n/a)." : "."),
      "",
      table,
    ].join("\n"),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log((await run({ smoke: process.argv.includes("--smoke") })).markdown);
}
