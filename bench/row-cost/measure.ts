/**
 * Rows read and written per operation on a Durable Object's SQLite storage, for contextblocks and
 * `agents/context`. Runs inside workerd (see row-cost.test.ts). Every statement either system runs goes
 * through a meter that sums the cursor's `rowsRead` and `rowsWritten`: the figures Cloudflare bills.
 */
import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { fromDurableObjectStorage, type SqlClient } from "@contextblocks/sql";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import {
  AgentContextProvider,
  AgentSearchProvider,
  ContextBlocks as AgentsContextBlocks,
  type ContextConfig as AgentsContextConfig,
} from "agents/context";
import { KNOWLEDGE_QUERIES, knowledgeEntries, knowledgeEntry } from "../src/corpus.js";
import type { MeasuredOperation, RowCost } from "../src/row-cost-figures.js";

export type SystemName = "contextblocks" | "agents";

/** Sums billed rows; `cost(operation)` is what one operation added. */
export class RowMeter {
  read = 0;
  written = 0;

  add(read: number, written: number): void {
    this.read += read;
    this.written += written;
  }

  async cost(operation: () => unknown | Promise<unknown>): Promise<RowCost> {
    const read = this.read;
    const written = this.written;
    await operation();
    return { read: this.read - read, written: this.written - written };
  }

  /** The mean cost of several operations (search over several queries). */
  async meanCost(operations: readonly (() => unknown | Promise<unknown>)[]): Promise<RowCost> {
    const total = { read: 0, written: 0 };
    for (const operation of operations) {
      const one = await this.cost(operation);
      total.read += one.read;
      total.written += one.written;
    }
    return { read: total.read / operations.length, written: total.written / operations.length };
  }
}

/** contextblocks' client: `fromDurableObjectStorage` with `onStatement` feeding the meter. */
function meteredClient(storage: DurableObjectStorage, meter: RowMeter): SqlClient {
  return fromDurableObjectStorage(storage, {
    onStatement: (report) => meter.add(report.rowsRead ?? 0, report.rowsWritten ?? 0),
  });
}

/** What `agents/context` providers take: an object with the tagged-template `sql` of an `Agent`, metered. */
function meteredHost(storage: DurableObjectStorage, meter: RowMeter) {
  return {
    sql<Row = Record<string, unknown>>(strings: TemplateStringsArray, ...values: unknown[]): Row[] {
      const query = strings.reduce(
        (text, part, index) => text + part + (index < values.length ? "?" : ""),
        "",
      );
      const cursor = storage.sql.exec(query, ...values);
      const rows = cursor.toArray() as Row[];
      meter.add(cursor.rowsRead, cursor.rowsWritten);
      return rows;
    },
  };
}

/** The parts of both libraries' `ContextBlocks` the block rows call. */
interface Context {
  freezeSystemPrompt(): Promise<string>;
  refreshSystemPrompt(): Promise<string>;
  reminder(): Promise<string | null>;
  setBlock(label: string, content: string): Promise<unknown>;
  appendToBlock(label: string, content: string): Promise<unknown>;
}

interface BlockProvider {
  get(): Promise<string | null>;
  set(content: string): Promise<void>;
}

export const STORED_BLOCKS = 10;

/**
 * Block operations with `STORED_BLOCKS` writable blocks stored in SQLite, the persisted prompt, and one
 * remind block whose value lives in memory (it costs no rows).
 */
export async function blockRowCosts(
  storage: DurableObjectStorage,
  system: SystemName,
): Promise<MeasuredOperation[]> {
  const meter = new RowMeter();
  let makeProvider: (label: string) => BlockProvider;
  let makeContext: () => Context;
  const remind = {
    label: "environment",
    provider: { get: async () => "Date: 2026-06-29" },
    whenChanged: "remind" as const,
  };
  const configs = (provider: (label: string) => BlockProvider) => [
    ...Array.from({ length: STORED_BLOCKS }, (_, index) => ({
      label: `block_${index}`,
      description: `Block number ${index}`,
      maxTokens: 2_000,
      provider: provider(`block_${index}`),
    })),
    remind,
  ];
  if (system === "contextblocks") {
    const client = meteredClient(storage, meter);
    makeProvider = (label) => new SqliteContextProvider(client, label);
    makeContext = () =>
      new ContextBlocks(
        configs(makeProvider) as ContextConfig[],
        new SqliteContextProvider(client, "_system_prompt"),
      );
  } else {
    const host = meteredHost(storage, meter);
    makeProvider = (label) => new AgentContextProvider(host, label);
    makeContext = () =>
      new AgentsContextBlocks(
        configs(makeProvider) as AgentsContextConfig[],
        new AgentContextProvider(host, "_system_prompt"),
      );
  }

  // Setup, not measured: the blocks' content.
  const setup = makeContext();
  for (let index = 0; index < STORED_BLOCKS; index += 1) {
    await setup.setBlock(`block_${index}`, knowledgeEntry(index).content);
  }

  const rows: MeasuredOperation[] = [];
  const measure = async (operation: string, run: () => unknown | Promise<unknown>) => {
    rows.push({ operation, cost: await meter.cost(run) });
  };

  const first = makeContext();
  await measure("first freeze, nothing stored (new instance: render + store)", () =>
    first.freezeSystemPrompt(),
  );
  await measure("warm freeze (same instance)", () => first.freezeSystemPrompt());
  const cold = makeContext();
  await measure("cold freeze, prompt stored (new instance)", () => cold.freezeSystemPrompt());
  await measure("`reminder()`, nothing changed", () => cold.reminder());
  const appending = makeContext();
  await measure("append, first call on a new instance", () =>
    appending.appendToBlock("block_1", "One more line."),
  );
  await measure("append, warm instance", () => appending.appendToBlock("block_1", "Another line."));
  await measure(`refresh (${STORED_BLOCKS} stored blocks)`, () => cold.refreshSystemPrompt());

  const provider = makeProvider("block_2");
  await provider.get(); // first use creates or checks the table; the rows below are steady state
  await measure("provider `get`", () => provider.get());
  await measure("provider `set` (new content)", () => provider.set(`${knowledgeEntry(2).content} Updated.`));
  return rows;
}

/** What the search rows call on either provider. */
interface SearchSide {
  provider: () => {
    get(): Promise<string | null>;
    search(query: string): Promise<string | null>;
    set(key: string, content: string): Promise<void>;
  };
  fill(count: number): Promise<void>;
}

/** Search-provider operations with `entries` entries in the index. */
export async function searchRowCosts(
  storage: DurableObjectStorage,
  system: SystemName,
  entries: number,
): Promise<MeasuredOperation[]> {
  const meter = new RowMeter();
  let side: SearchSide;
  if (system === "contextblocks") {
    const client = meteredClient(storage, meter);
    const provider = () => new Fts5SearchProvider(client, { label: "knowledge" });
    side = {
      provider,
      async fill(count) {
        // Its own set(), one statement per entry: the provider's real write path.
        const writer = provider();
        for (const entry of knowledgeEntries(count)) await writer.set(entry.key, entry.content);
      },
    };
  } else {
    const host = meteredHost(storage, meter);
    const provider = () => {
      const search = new AgentSearchProvider(host);
      search.init("knowledge");
      return search;
    };
    side = {
      provider,
      async fill(count) {
        await provider().get(); // creates the table
        // The row its set() ends with for a new key, without the DELETE before it, which scans the whole
        // table (label and key are UNINDEXED) and would make filling quadratic.
        for (const entry of knowledgeEntries(count)) {
          storage.sql.exec(
            "INSERT INTO cf_agents_search_fts (label, key, content) VALUES (?, ?, ?)",
            "knowledge",
            entry.key,
            entry.content,
          );
        }
      },
    };
  }
  await side.fill(entries);

  const rows: MeasuredOperation[] = [];
  const measure = async (operation: string, run: () => unknown | Promise<unknown>) => {
    rows.push({ operation, cost: await meter.cost(run) });
  };
  const fresh = side.provider();
  await measure("`get`, first call on a new instance", () => fresh.get());
  await measure("`get` (entry count)", () => fresh.get());
  const note = knowledgeEntry(20_000_000);
  await measure("`set`, new key", () => fresh.set("new-entry", note.content));
  await measure("`set`, replacing a key", () =>
    fresh.set(
      `note-${Math.floor(entries / 2)}`,
      `${knowledgeEntry(Math.floor(entries / 2)).content} Revised.`,
    ),
  );
  let matches = 0;
  const cost = await meter.meanCost(
    KNOWLEDGE_QUERIES.map((query) => async () => {
      matches += countMatches(await fresh.search(query));
    }),
  );
  rows.push({
    operation: `\`search\` (mean of ${KNOWLEDGE_QUERIES.length} queries)`,
    cost,
    matches: matches / KNOWLEDGE_QUERIES.length,
  });
  return rows;
}

/** Matches in a search result: both providers start each one with a `[key]` line. */
function countMatches(result: string | null): number {
  return result === null ? 0 : (result.match(/^\[[^\]\n]+\]$/gm)?.length ?? 0);
}
