/**
 * The prefix-cache session in dollars: every request of the scripted 50-turn session priced with each
 * provider's published cache rules (bench/src/cost-model/prices.ts), per 1,000 turns, and the Durable Object
 * storage side (rows read and written per turn at Cloudflare's prices).
 *
 * Run alone: `node --import tsx src/cost-model.ts [--smoke]` (plays the prefix-cache session first).
 */
import { pathToFileURL } from "node:url";
import { DURABLE_OBJECT_ROWS, MODEL_PRICES, type ModelPrice } from "./cost-model/prices.js";
import { formatInteger, formatPercent, formatRatio, markdownTable } from "./markdown.js";
import { scriptedSession } from "./prefix-cache/session.js";
import * as prefixCache from "./prefix-cache.js";
import type { RowCost, RowCostRow } from "./row-cost-figures.js";

const TURNS_PRICED = 1_000;
const CONVERSATIONS_PLANNED = 1_000_000;

/** A priced system: which prefix-cache run it reads, and how its cache writes are billed. */
interface PricedSystem {
  label: string;
  /** Name of the system in the prefix-cache result. */
  system: string;
  /** Anthropic's 1-hour lifetime: writes at the 1-hour price. */
  oneHour?: boolean;
}

const PRICED: readonly PricedSystem[] = [
  { label: "contextblocks, cache hints (default)", system: "contextblocks (middleware)" },
  { label: "contextblocks, cache hints, 1-hour TTL", system: "contextblocks (middleware)", oneHour: true },
  { label: "contextblocks, no cache hints", system: "contextblocks (middleware, no cache hints)" },
  { label: "re-render every turn", system: "re-render every turn" },
  { label: "agents/context", system: "agents/context" },
];

interface Priced {
  model: ModelPrice;
  label: string;
  /** Dollars for the whole session. */
  dollars: number;
  /** Share of input tokens served from the cache. */
  cachedShare: number;
  /** Share of input tokens written to the cache. */
  writtenShare: number;
}

/** One request's input cost under a model's rules, in dollars. */
function requestDollars(
  model: ModelPrice,
  request: prefixCache.RequestFigure,
  oneHour: boolean,
): { dollars: number; read: number; written: number } {
  const perToken = (price: number) => price / 1_000_000;
  if (model.rule === "automatic") {
    const read = request.cached;
    return {
      dollars: (request.tokens - read) * perToken(model.input) + read * perToken(model.cacheRead),
      read,
      written: 0,
    };
  }
  const read = request.breakpointRead;
  const written = request.breakpointWritten;
  const writePrice = oneHour ? (model.cacheWriteOneHour ?? model.cacheWrite) : model.cacheWrite;
  return {
    dollars:
      (request.tokens - read - written) * perToken(model.input) +
      read * perToken(model.cacheRead) +
      written * perToken(writePrice),
    read,
    written,
  };
}

export function priceSession(result: prefixCache.PrefixCacheResult): Priced[] {
  const priced: Priced[] = [];
  for (const model of MODEL_PRICES) {
    for (const entry of PRICED) {
      if (entry.oneHour && model.cacheWriteOneHour === undefined) continue;
      const system = result.systems.find((candidate) => candidate.name === entry.system);
      if (system === undefined) continue;
      let dollars = 0;
      let read = 0;
      let written = 0;
      for (const request of system.requests) {
        const cost = requestDollars(model, request, entry.oneHour === true);
        dollars += cost.dollars;
        read += cost.read;
        written += cost.written;
      }
      priced.push({
        model,
        label: entry.label,
        dollars,
        cachedShare: read / system.inputTokens,
        writtenShare: written / system.inputTokens,
      });
    }
  }
  return priced;
}

/** The storage operations of the session, per system: how often each happens. */
interface StorageOperation {
  operation: string;
  /** How the row-cost benchmark names it: group and the start of its operation text. */
  group: string;
  prefix: string;
  count: number;
}

/**
 * The Durable Object operations of the scripted session: every model call freezes (warm) and asks for the
 * reminder; the tool calls append to memory, search the knowledge index and index new notes; one refresh at
 * compaction; and one cold freeze per conversation (the object was evicted between conversations).
 */
function sessionOperations(turns: number, requests: number): StorageOperation[] {
  const session = scriptedSession(turns);
  const count = (tool: string, label: string) =>
    session.turns.filter((turn) => turn.toolCall?.toolName === tool && label === toolLabel(turn.toolCall))
      .length;
  return [
    { operation: "cold freeze (once per conversation)", group: "10 blocks", prefix: "cold freeze", count: 1 },
    {
      operation: "warm freeze (every model call)",
      group: "10 blocks",
      prefix: "warm freeze",
      count: requests,
    },
    {
      operation: "`reminder()` (every model call)",
      group: "10 blocks",
      prefix: "`reminder()`",
      count: requests,
    },
    {
      operation: "append to memory (`set_context`)",
      group: "10 blocks",
      prefix: "append, warm",
      count: count("set_context", "memory"),
    },
    {
      operation: "search the knowledge index",
      group: "1,000 entries",
      prefix: "`search`",
      count: count("search_context", "knowledge"),
    },
    {
      operation: "index a new note (`set_context`)",
      group: "1,000 entries",
      prefix: "`set`, new key",
      count: count("set_context", "knowledge"),
    },
    { operation: "refresh after compaction", group: "10 blocks", prefix: "refresh", count: 1 },
  ];
}

function toolLabel(call: { input: unknown } | undefined): string | undefined {
  const input = call?.input as { label?: unknown } | undefined;
  return typeof input?.label === "string" ? input.label : undefined;
}

/**
 * Rows per operation as the workerd row-cost benchmark measured them (bench/RESULTS.md, "Row cost on a
 * Durable Object", 10 blocks and 1,000 entries), used when that benchmark did not run in the same process.
 */
const MEASURED_ROWS: Record<string, { contextblocks: RowCost; agents: RowCost }> = {
  "cold freeze": { contextblocks: { read: 1, written: 0 }, agents: { read: 1, written: 0 } },
  "warm freeze": { contextblocks: { read: 0, written: 0 }, agents: { read: 1, written: 0 } },
  "`reminder()`": { contextblocks: { read: 0, written: 0 }, agents: { read: 11, written: 0 } },
  "append, warm": { contextblocks: { read: 1, written: 1 }, agents: { read: 1, written: 1 } },
  "`search`": { contextblocks: { read: 9.3, written: 0 }, agents: { read: 1.5, written: 0 } },
  "`set`, new key": { contextblocks: { read: 3, written: 2 }, agents: { read: 1_000, written: 1 } },
  refresh: { contextblocks: { read: 11, written: 1 }, agents: { read: 11, written: 1 } },
};

function rowsOf(
  operation: StorageOperation,
  live: readonly RowCostRow[] | undefined,
): { contextblocks: RowCost; agents: RowCost; measured: boolean } {
  const row = live?.find(
    (candidate) => candidate.group === operation.group && candidate.operation.startsWith(operation.prefix),
  );
  if (row !== undefined) return { contextblocks: row.contextblocks, agents: row.agents, measured: true };
  return { ...MEASURED_ROWS[operation.prefix]!, measured: false };
}

/** Rows as the row-cost table prints them: whole numbers, means to one decimal. */
function formatRows(rows: number): string {
  return Number.isInteger(rows) ? formatInteger(rows) : rows.toFixed(1);
}

function dollarsOfRows(rows: RowCost): number {
  return (rows.written * DURABLE_OBJECT_ROWS.written + rows.read * DURABLE_OBJECT_ROWS.read) / 1_000_000;
}

export interface CostModelResult {
  priced: Priced[];
  markdown: string;
}

export async function run(
  options: {
    smoke?: boolean;
    prefixCache?: prefixCache.PrefixCacheResult;
    rowCosts?: readonly RowCostRow[];
  } = {},
): Promise<CostModelResult> {
  const result = options.prefixCache ?? (await prefixCache.run({ smoke: options.smoke === true }));
  const perThousand = TURNS_PRICED / result.turns;
  const priced = priceSession(result);

  const dollarRows = priced.map((entry) => {
    const anchor = priced.find((other) => other.model === entry.model && other.label === "agents/context");
    return [
      `${entry.model.provider}, ${entry.model.model}`,
      entry.label,
      formatPercent(entry.cachedShare),
      formatPercent(entry.writtenShare),
      `$${(entry.dollars * perThousand).toFixed(2)}`,
      formatRatio(entry.dollars, anchor?.dollars),
    ];
  });
  const dollarTable = markdownTable(
    [
      "provider, model",
      "system",
      "input read from cache",
      "input written to cache",
      `input $ per ${formatInteger(TURNS_PRICED)} turns`,
      "÷ agents/context",
    ],
    dollarRows,
  );

  const requests = result.systems.find((system) => system.name === "contextblocks")?.requests.length ?? 0;
  const operations = sessionOperations(result.turns, requests);
  let ours: RowCost = { read: 0, written: 0 };
  let theirs: RowCost = { read: 0, written: 0 };
  let allMeasured = true;
  const storageRows = operations.map((operation) => {
    const rows = rowsOf(operation, options.rowCosts);
    allMeasured &&= rows.measured;
    ours = {
      read: ours.read + rows.contextblocks.read * operation.count,
      written: ours.written + rows.contextblocks.written * operation.count,
    };
    theirs = {
      read: theirs.read + rows.agents.read * operation.count,
      written: theirs.written + rows.agents.written * operation.count,
    };
    const figure = (rows: RowCost) => `${formatRows(rows.read)} / ${formatRows(rows.written)}`;
    return [operation.operation, String(operation.count), figure(rows.contextblocks), figure(rows.agents)];
  });
  const perTurn = (rows: RowCost) => ({
    read: rows.read / result.turns,
    written: rows.written / result.turns,
  });
  const conversationDollars = (rows: RowCost) => dollarsOfRows(rows) * CONVERSATIONS_PLANNED;
  const storageTable = markdownTable(
    ["operation", "times per conversation", "contextblocks read / written", "agents/context read / written"],
    storageRows,
  );
  const storageTotals = markdownTable(
    [
      "system",
      "rows read per turn",
      "rows written per turn",
      `$ per ${formatInteger(TURNS_PRICED)} turns`,
      `$ per ${formatInteger(CONVERSATIONS_PLANNED)} conversations of ${result.turns} turns`,
    ],
    [
      ["contextblocks", ours],
      ["agents/context", theirs],
    ].map(([name, rows]) => {
      const turn = perTurn(rows as RowCost);
      return [
        name as string,
        turn.read.toFixed(2),
        turn.written.toFixed(2),
        `$${(dollarsOfRows(rows as RowCost) * perThousand).toFixed(4)}`,
        `$${conversationDollars(rows as RowCost).toFixed(0)}`,
      ];
    }),
  );

  const markdown = [
    `The ${result.turns}-turn session above (${requests} model requests for contextblocks), every request ` +
      "priced by its provider's rules: OpenAI's gpt-5 caches automatically (the longest prefix shared with the " +
      "previous request, from 1,024 tokens; writes free); Anthropic, Bedrock and OpenAI's GPT-5.6 (writes at " +
      "1.25× input) only at breakpoints (a request " +
      "reads the longest cached prefix ending at an earlier request's breakpoint and writes from there to its own " +
      "last breakpoint, from 1,024 tokens). Turns are assumed to come within the cache lifetime. Input tokens " +
      "only: the scripted replies are the same for every system. Prices and their sources: bench/README.md.",
    "",
    dollarTable,
    "",
    "Without hints, a breakpoint provider caches nothing: agents/context and re-rendering set none (agents' own " +
      "open discussion #1624). GPT-5.6 is priced at the middleware's breakpoints only: OpenAI's own implicit " +
      "breakpoint on the newest message is not modelled, so its rows without hints overstate it. gpt-5's " +
      "figures are the same with and without hints here: `promptCacheKey` " +
      "decides which machine serves a request, which a single-process replay cannot show; it raises the hit rate " +
      "under load, where requests without a key may land on a cold machine.",
    "",
    "#### Durable Object storage",
    "",
    `Rows per operation as the workerd row-cost benchmark measures them (10 blocks, a 1,000-entry index${
      allMeasured ? ", this run" : "; figures of the last full run where it did not run now"
    }), times how often the session does each; $${DURABLE_OBJECT_ROWS.written.toFixed(2)} per million rows ` +
      `written, $${DURABLE_OBJECT_ROWS.read} per million read.`,
    "",
    storageTable,
    "",
    storageTotals,
  ].join("\n");
  return { priced, markdown };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log((await run({ smoke: process.argv.includes("--smoke") })).markdown);
}
