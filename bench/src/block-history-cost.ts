/**
 * What block history costs per write, with history (the default: the last 50 versions) and without
 * (`versions: false`, one row as `agents/context` writes):
 * - on a Durable Object: statements, rows read and rows written (the SQL cursor's `rowsRead` / `rowsWritten`,
 *   what Cloudflare bills), for a write while the ring of versions fills and once it is full;
 * - on better-sqlite3 (Node): the time per changed write, in memory and on a file (default settings: each
 *   write is its own transaction), in interleaved rounds, median.
 *
 * One file, both halves: run with Node (`node --import tsx src/block-history-cost.ts [--smoke]`), it starts
 * itself as a Worker with wrangler's `unstable_startWorker` for the Durable Object half; inside workerd only
 * the Durable Object and the fetch handler below are used.
 */

import type { StatementReport } from "@contextblocks/sql";
import type { DurableObjectStateLike } from "@contextblocks/sql/store-kit";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import { withLocalWorker } from "./local-worker.js";
import { formatDuration, markdownTable } from "./markdown.js";
import { median } from "./statistics.js";

interface WriteCost {
  operation: string;
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

async function durableScenario(state: DurableObjectStateLike): Promise<WriteCost[]> {
  let reports: StatementReport[] = [];
  const onStatement = (report: StatementReport) => reports.push(report);
  const measure = async (operation: string, run: () => Promise<unknown>): Promise<WriteCost> => {
    reports = [];
    await run();
    return {
      operation,
      statements: reports.length,
      rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
      rowsWritten: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
    };
  };
  const plain = new SqliteContextProvider(state.storage, { label: "plain", onStatement, versions: false });
  const kept = new SqliteContextProvider(state.storage, { label: "kept", onStatement });
  await plain.set("v0");
  await kept.set("v0");
  const costs = [
    await measure("`set`, changed content, without history", () => plain.set("v1")),
    await measure("`set`, changed content, with history (version 2)", () => kept.set("v1")),
  ];
  for (let index = 2; index < 60; index++) await kept.set(`v${index}`);
  costs.push(
    await measure("`set`, changed content, with history (version 61, 50 kept)", () => kept.set("v60")),
    await measure("`set`, unchanged content, with history", () => kept.set("v60")),
    await measure("`setIf` (edits, appends), with history", () => kept.setIf("v60", "v61")),
    await measure("`setIf` (edits, appends), without history", () => plain.setIf("v1", "v2")),
    await measure(
      "`history()`, 50 versions kept",
      () => kept.versions?.({ limit: 50 }) ?? Promise.resolve([]),
    ),
  );
  return costs;
}

/** The Durable Object (SQLite storage) that runs the scenario. */
export class HistoryCostObject {
  constructor(private readonly state: DurableObjectStateLike) {}

  async fetch(): Promise<Response> {
    try {
      return Response.json(await durableScenario(this.state));
    } catch (error) {
      return new Response(error instanceof Error ? (error.stack ?? error.message) : String(error), {
        status: 500,
      });
    }
  }
}

interface CostNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

export default {
  async fetch(request: Request, env: { HISTORY_COST: CostNamespace }): Promise<Response> {
    return env.HISTORY_COST.get(env.HISTORY_COST.idFromName(`history-${Date.now()}`)).fetch(request);
  },
};

// ── Node: the Durable Object figures through a local Worker, then the better-sqlite3 timings ──────────────

async function timeBetterSqlite3(smoke: boolean): Promise<string[][]> {
  // A non-literal specifier keeps the Worker's bundler from pulling better-sqlite3 (a Node addon) in.
  const driver = "better-sqlite3";
  const { default: Database } = (await import(driver)) as { default: typeof import("better-sqlite3") };
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-history-cost-"));
  try {
    const rounds = smoke ? 3 : 15;
    const writes = smoke ? 50 : 1_000;
    const rows: string[][] = [];
    for (const where of ["in memory", "on a file"] as const) {
      const open = (name: string) => new Database(where === "in memory" ? ":memory:" : join(directory, name));
      const variants = [
        {
          name: "without history",
          provider: new SqliteContextProvider(open("plain.db"), { label: "b", versions: false }),
        },
        {
          name: "with history (50 kept)",
          provider: new SqliteContextProvider(open("kept.db"), { label: "b" }),
        },
      ];
      const times = variants.map(() => [] as number[]);
      let counter = 0;
      for (let round = 0; round <= rounds; round++) {
        for (const [index, variant] of variants.entries()) {
          const start = performance.now();
          for (let write = 0; write < writes; write++) {
            counter += 1;
            await variant.provider.set(`The user is Ada. Fact number ${counter}.`);
          }
          if (round > 0) times[index]?.push((performance.now() - start) / writes);
        }
      }
      const base = median(times[0] ?? []);
      for (const [index, variant] of variants.entries()) {
        const value = median(times[index] ?? []);
        rows.push([
          `${where}, ${variant.name}`,
          formatDuration(value),
          index === 0 ? "—" : `${(value / base).toFixed(2)}×`,
        ]);
      }
    }
    return rows;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

export async function runBlockHistoryCost(
  smoke: boolean,
  entrypoint: string = decodeURIComponent(new URL(import.meta.url).pathname),
): Promise<string> {
  const durable = await withLocalWorker(
    {
      name: "contextblocks-history-cost",
      entrypoint,
      durableObject: { className: "HistoryCostObject", binding: "HISTORY_COST" },
    },
    async (worker) => {
      const response = await worker.fetch("http://history-cost/");
      if (!response.ok) throw new Error(`history cost: ${await response.text()}`);
      return (await response.json()) as WriteCost[];
    },
  );
  const timings = await timeBetterSqlite3(smoke);
  return [
    "## `SqliteContextProvider` on a Durable Object: a write with and without history",
    "",
    "A block's newest versions are kept in its own row, so a write with history reads and writes one row,",
    "as a write without, whether 1 or 50 versions are kept; every 16 versions the next write moves them to a",
    "batch row (one row more of each). A store's first write reads the row once more.",
    "",
    markdownTable(
      ["operation", "statements", "rows read", "rows written"],
      durable.map((cost) => [
        cost.operation,
        String(cost.statements),
        String(cost.rowsRead),
        String(cost.rowsWritten),
      ]),
    ),
    "",
    "## Time per changed `set` on better-sqlite3",
    "",
    markdownTable(["database, variant", "median per write", "vs without history"], timings),
    "",
    `${smoke ? 3 : 15} interleaved rounds of ${smoke ? 50 : 1_000} changed writes per variant, median of the rounds. The file databases use better-sqlite3's defaults (rollback journal, one transaction per write).`,
  ].join("\n");
}

const isNodeMain =
  typeof process !== "undefined" &&
  typeof process.argv?.[1] === "string" &&
  process.argv[1].replaceAll("\\", "/").endsWith("src/block-history-cost.ts");

if (isNodeMain) {
  runBlockHistoryCost(process.argv.includes("--smoke")).then(
    (report) => console.log(report),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
