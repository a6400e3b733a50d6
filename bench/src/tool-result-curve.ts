/**
 * What `search_context` results cost against what they find: the prefix-cache session's input cost
 * (contextblocks ÷ agents/context, cached input at 0.1×) and LoCoMo hit@10 through the same tool path, for
 * several settings of the search provider behind the knowledge block (`Fts5SearchProvider`'s `limit`: results
 * per search, and `resultTokens`: the excerpt budget of one result). `search_context` returns the provider's
 * text as it is, so the provider's ranked keys are what the model reads.
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

/** The provider's defaults first (10 results, 40-token excerpts), then fewer and shorter results. */
const SETTINGS: readonly Setting[] = [
  { name: "10 results, 40-token excerpts (default)", options: {} },
  { name: "10 results, 24-token excerpts", options: { resultTokens: 24 } },
  { name: "10 results, 16-token excerpts", options: { resultTokens: 16 } },
  { name: "5 results, 40-token excerpts", options: { limit: 5 } },
  { name: "5 results, 24-token excerpts", options: { limit: 5, resultTokens: 24 } },
  { name: "3 results, 24-token excerpts", options: { limit: 3, resultTokens: 24 } },
];

/** Input cost with the prefix cache, in uncached-token units. */
function cachedCost(figures: SystemFigures): number {
  return figures.inputTokens * figures.relativeCost;
}

async function hitAt10(conversations: readonly LocomoConversation[], options: KnowledgeOptions) {
  let questions = 0;
  let hits = 0;
  for (const conversation of conversations) {
    const provider = new Fts5SearchProvider(new Database(":memory:"), { label: "turns", ...options });
    for (const turn of conversation.turns) await provider.set(turn.dia_id, `${turn.speaker}: ${turn.text}`);
    const keys = new Set(conversation.turns.map((turn) => turn.dia_id));
    for (const question of conversation.questions) {
      const found = resultKeys(await provider.search(question.question), keys).slice(0, 10);
      questions += 1;
      if (found.some((key) => question.evidence.includes(key))) hits += 1;
    }
  }
  return questions === 0 ? Number.NaN : hits / questions;
}

export async function run(options: { smoke?: boolean } = {}): Promise<{ markdown: string }> {
  const session = scriptedSession(options.smoke ? 8 : 50);
  const agents = await playSession(session, agentsSystem);
  const conversations = readLocomo(options.smoke);
  const rows: string[][] = [];
  for (const setting of options.smoke ? SETTINGS.slice(0, 2) : SETTINGS) {
    const ours = await playSession(session, (world) => contextblocksSystem(world, setting.options));
    const hit = conversations === null ? "n/a" : (await hitAt10(conversations, setting.options)).toFixed(3);
    rows.push([
      setting.name,
      formatInteger(ours.toolResultTokens),
      formatInteger(ours.inputTokens),
      formatRatio(cachedCost(ours), cachedCost(agents)),
      hit,
    ]);
  }
  const table = markdownTable(
    [
      "knowledge search setting",
      "tool-result tokens",
      "input tokens",
      "input cost ÷ agents/context",
      "LoCoMo hit@10 (tool path)",
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
