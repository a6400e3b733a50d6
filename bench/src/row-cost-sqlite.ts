/**
 * Row cost of durable context blocks on a real Durable Object (workerd, local): rows read and written per
 * operation, for `@contextblocks/sqlite` and for `agents/context` (the npm package) side by side.
 *
 * This one file is both halves: run with Node (`node --import tsx src/row-cost-sqlite.ts`), it starts itself
 * as a Worker with wrangler's `unstable_startWorker`, asks its Durable Object to run each scenario, and prints
 * markdown tables. Inside workerd, only the Durable Object and the fetch handler below are used.
 */
import type { ContextConfig } from "@contextblocks/core";
import type { StatementReport } from "@contextblocks/sql";
import type { DurableObjectStateLike } from "@contextblocks/sql/store-kit";
import { createDurableContext } from "@contextblocks/sqlite";
import { AgentContextProvider, ContextBlocks as AgentsContextBlocks } from "agents/context";
import { withLocalWorker } from "./local-worker.js";
import { markdownTable } from "./markdown.js";

/** One operation's cost, summed over its statements. */
export interface RowCost {
  operation: string;
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

type System = "contextblocks" | "agents";

const BLOCK_COUNTS = [1, 5, 20] as const;

/** The operations every scenario measures, in order. */
interface Scenario {
  setBlock(label: string, content: string): Promise<unknown>;
  freezeSystemPrompt(): Promise<string>;
  refreshSystemPrompt(): Promise<string>;
}

function writableBlocks(count: number): ContextConfig[] {
  return Array.from({ length: count }, (_, index) => ({
    label: `block-${index}`,
    description: `Block ${index}`,
  }));
}

/** Collects statement reports and sums them per measured operation. */
class Meter {
  private reports: { rowsRead: number; rowsWritten: number }[] = [];
  readonly onStatement = (report: StatementReport): void => {
    this.reports.push({ rowsRead: report.rowsRead ?? 0, rowsWritten: report.rowsWritten ?? 0 });
  };

  async measure(operation: string, run: () => Promise<unknown>): Promise<RowCost> {
    this.reports = [];
    await run();
    return {
      operation,
      statements: this.reports.length,
      rowsRead: this.reports.reduce((sum, report) => sum + report.rowsRead, 0),
      rowsWritten: this.reports.reduce((sum, report) => sum + report.rowsWritten, 0),
    };
  }
}

/**
 * An `agents` Agent's `sql` as the framework implements it (the template joined with `?`, run through
 * `ctx.storage.sql.exec`, every row read), metered after the cursor is consumed.
 */
function meteredAgentHost(state: DurableObjectStateLike, meter: Meter) {
  return {
    sql<Row>(strings: TemplateStringsArray, ...values: unknown[]): Row[] {
      const query = strings.reduce(
        (text, part, index) => text + part + (index < values.length ? "?" : ""),
        "",
      );
      const cursor = state.storage.sql.exec(query, ...values);
      const rows = cursor.toArray() as Row[];
      meter.onStatement({ text: query, rowsRead: cursor.rowsRead, rowsWritten: cursor.rowsWritten });
      return rows;
    },
  };
}

async function runScenario(state: DurableObjectStateLike, system: System, count: number): Promise<RowCost[]> {
  const meter = new Meter();
  const configs = writableBlocks(count);
  const build = (): Scenario => {
    if (system === "contextblocks") {
      return createDurableContext(state.storage, configs, { onStatement: meter.onStatement });
    }
    const host = meteredAgentHost(state, meter);
    return new AgentsContextBlocks(
      configs,
      new AgentContextProvider(host, "_system_prompt"),
      (label) => new AgentContextProvider(host, label),
    );
  };
  const first = build();
  for (let index = 0; index < count; index++) await first.setBlock(`block-${index}`, `content ${index}`);
  const costs: RowCost[] = [];
  costs.push(await meter.measure("first freeze (nothing stored)", () => first.freezeSystemPrompt()));
  costs.push(await meter.measure("warm freeze", () => first.freezeSystemPrompt()));
  costs.push(await meter.measure("setBlock", () => first.setBlock("block-0", "changed")));
  costs.push(await meter.measure("refresh (prompt changed)", () => first.refreshSystemPrompt()));
  costs.push(await meter.measure("refresh (prompt unchanged)", () => first.refreshSystemPrompt()));
  const cold = build(); // a new instance on the same storage: what a cold wake builds
  costs.push(await meter.measure("cold freeze (prompt stored)", () => cold.freezeSystemPrompt()));
  costs.push(await meter.measure("warm freeze after cold", () => cold.freezeSystemPrompt()));
  return costs;
}

/** The Durable Object (SQLite storage) that runs one scenario per request. */
export class RowCostObject {
  constructor(private readonly state: DurableObjectStateLike) {}

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const system = url.searchParams.get("system") === "agents" ? "agents" : "contextblocks";
    const count = Number(url.searchParams.get("blocks") ?? "1");
    try {
      return Response.json(await runScenario(this.state, system, count));
    } catch (error) {
      return new Response(error instanceof Error ? (error.stack ?? error.message) : String(error), {
        status: 500,
      });
    }
  }
}

interface RowCostNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

export default {
  async fetch(request: Request, env: { ROW_COST: RowCostNamespace }): Promise<Response> {
    const url = new URL(request.url);
    // A fresh object (and so a fresh database) per system and block count.
    const name = `${url.searchParams.get("system")}-${url.searchParams.get("blocks")}`;
    return env.ROW_COST.get(env.ROW_COST.idFromName(name)).fetch(request);
  },
};

// ── Node: start this file as a Worker and print the figures ────────────────────────────────────────────

/**
 * Runs every scenario on a local Durable Object and returns the report as markdown. `entrypoint` is this
 * file (the Worker wrangler bundles); the default is where this module was loaded from.
 */
export async function runRowCostSqlite(
  entrypoint: string = decodeURIComponent(new URL(import.meta.url).pathname),
): Promise<string> {
  return withLocalWorker(
    {
      name: "contextblocks-row-cost-sqlite",
      entrypoint,
      durableObject: { className: "RowCostObject", binding: "ROW_COST" },
    },
    async (worker) => {
      const sections: string[] = [
        "# Row cost of durable blocks on a Durable Object",
        "",
        "Rows read and written as the Durable Object SQL cursor reports them (`rowsRead`, `rowsWritten`: what",
        "Cloudflare bills), summed per operation. `agents/context` runs through an Agent-style `sql` host on the",
        "same storage. The physical limits: one row read for a cold freeze with a prompt store, none for a warm one.",
      ];
      for (const count of BLOCK_COUNTS) {
        const results: Record<System, RowCost[]> = { contextblocks: [], agents: [] };
        for (const system of ["contextblocks", "agents"] as const) {
          const response = await worker.fetch(`http://row-cost/?system=${system}&blocks=${count}`);
          if (!response.ok) throw new Error(`${system}, ${count} blocks: ${await response.text()}`);
          results[system] = (await response.json()) as RowCost[];
        }
        const rows = results.contextblocks.map((ours, index) => {
          const theirs = results.agents[index];
          const cell = (cost: RowCost | undefined) =>
            cost === undefined ? "n/a" : `${cost.rowsRead} / ${cost.rowsWritten} (${cost.statements})`;
          return [ours.operation, cell(ours), cell(theirs)];
        });
        sections.push(
          "",
          `## ${count} writable block${count === 1 ? "" : "s"}`,
          "",
          markdownTable(
            ["operation", "@contextblocks/sqlite: read / written (statements)", "agents/context"],
            rows,
          ),
        );
      }
      return sections.join("\n");
    },
  );
}

const isNodeMain =
  typeof process !== "undefined" &&
  typeof process.argv?.[1] === "string" &&
  process.argv[1].replaceAll("\\", "/").endsWith("src/row-cost-sqlite.ts");

if (isNodeMain) {
  runRowCostSqlite().then(
    (report) => console.log(report),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
