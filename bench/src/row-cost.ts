/**
 * Row cost on a Durable Object: rows read and written per operation, contextblocks against `agents/context`.
 *
 * The measuring happens in workerd (row-cost/row-cost.test.ts through vitest-pool-workers, config
 * vitest.rowcost.config.ts); this module starts that run, reads the figures from vitest's JSON report and
 * renders the table. Run alone: `node --import tsx src/row-cost.ts [--smoke]`.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { formatInteger, formatRatio, markdownTable } from "./markdown.js";
import type { RowCost, RowCostFigures, RowCostRow } from "./row-cost-figures.js";

const BENCH_DIRECTORY = fileURLToPath(new URL("..", import.meta.url));

export interface RowCostResult {
  rows: RowCostRow[];
  markdown: string;
}

interface JsonReport {
  testResults?: {
    assertionResults?: { status?: string; failureMessages?: string[]; meta?: { rowCost?: RowCostFigures } }[];
  }[];
}

/** Runs the workerd measurement and returns its figures. */
export function measureInWorkerd(entryCounts: readonly number[]): RowCostFigures {
  const require = createRequire(import.meta.url);
  const vitest = join(dirname(require.resolve("vitest/package.json")), "vitest.mjs");
  const outputDirectory = join(BENCH_DIRECTORY, "out");
  mkdirSync(outputDirectory, { recursive: true });
  const report = join(outputDirectory, "row-cost.vitest.json");
  const child = spawnSync(
    process.execPath,
    [vitest, "run", "--config", "vitest.rowcost.config.ts", "--reporter=json", `--outputFile=${report}`],
    {
      cwd: BENCH_DIRECTORY,
      env: { ...process.env, ROW_COST_ENTRIES: entryCounts.join(",") },
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      timeout: 30 * 60_000,
      killSignal: "SIGKILL",
    },
  );
  if (child.error !== undefined)
    throw new Error(`row-cost: ${child.error.message}\n${child.stdout}\n${child.stderr}`);
  if (child.status !== 0) {
    throw new Error(
      `row-cost: the workerd run failed (exit ${child.status ?? child.signal}).\n${child.stdout}\n${child.stderr}`,
    );
  }
  const parsed = JSON.parse(readFileSync(report, "utf8")) as JsonReport;
  const result = parsed.testResults?.[0]?.assertionResults?.[0];
  if (result?.status !== "passed" || result.meta?.rowCost === undefined) {
    throw new Error(
      `row-cost: no figures in ${report}: ${result?.failureMessages?.join("\n") ?? "no test result"}`,
    );
  }
  return result.meta.rowCost;
}

function formatCost(cost: RowCost): string {
  const format = (value: number) => (Number.isInteger(value) ? formatInteger(value) : value.toFixed(1));
  return `${format(cost.read)} / ${format(cost.written)}`;
}

/**
 * Durable Object SQLite pricing: $0.001 per million rows read, $1.00 per million rows written. The billed
 * cost of an operation in written-row equivalents: written + read / 1,000.
 */
export const READ_PRICE_IN_WRITES = 1 / 1_000;

function billed(cost: RowCost): number {
  return cost.written + cost.read * READ_PRICE_IN_WRITES;
}

function isBehind(row: RowCostRow): boolean {
  return billed(row.contextblocks) > billed(row.agents) + 1e-9;
}

/** Rows where contextblocks touches more rows of either kind, even when it is cheaper overall. */
function touchesMore(row: RowCostRow): boolean {
  return row.contextblocks.read > row.agents.read || row.contextblocks.written > row.agents.written;
}

function formatBilled(value: number): string {
  return value.toFixed(3).replace(/\.?0+$/, "");
}

export function rowCostMarkdown(rows: readonly RowCostRow[]): string {
  const table = markdownTable(
    [
      "size",
      "operation",
      "contextblocks read / written",
      "agents/context read / written",
      "reads: agents ÷ contextblocks",
      "writes: agents ÷ contextblocks",
      "billed: agents ÷ contextblocks",
      "",
    ],
    rows.map((row) => [
      row.group,
      row.note ? `${row.operation} (${row.note})` : row.operation,
      formatCost(row.contextblocks),
      formatCost(row.agents),
      formatRatio(row.agents.read, row.contextblocks.read),
      formatRatio(row.agents.written, row.contextblocks.written),
      formatRatio(billed(row.agents), billed(row.contextblocks)),
      isBehind(row) ? "**contextblocks behind**" : touchesMore(row) ? "more rows, cheaper" : "",
    ]),
    2,
  );
  const behind = rows.filter(isBehind);
  const more = rows.filter((row) => touchesMore(row) && !isBehind(row));
  const describe = (row: RowCostRow) =>
    `${row.group}, ${row.operation}: ${formatCost(row.contextblocks)} against ${formatCost(row.agents)} ` +
    `(billed ${formatBilled(billed(row.contextblocks))} against ${formatBilled(billed(row.agents))} written-row equivalents)`;
  const lines = [
    "Rows read / rows written per operation, summed from the Durable Object cursors (`rowsRead`, " +
      "`rowsWritten`: what Cloudflare bills). Deterministic: one run. Billed = written + read / 1,000 " +
      "(Durable Object SQLite: $1.00 per million rows written, $0.001 per million read). A ratio above 1 means " +
      "contextblocks costs less; `∞` means contextblocks touches none.",
    "",
    table,
    "",
    behind.length === 0
      ? "- contextblocks is not behind on the billed cost of any row."
      : `- **contextblocks is behind on the billed cost of ${behind.length} row(s):** ${behind.map(describe).join("; ")}.`,
  ];
  if (more.length > 0) {
    lines.push(
      `- contextblocks touches more rows of one kind, though it is cheaper overall, on: ${more.map(describe).join("; ")}.`,
    );
  }
  return lines.join("\n");
}

export async function run(options: { smoke?: boolean } = {}): Promise<RowCostResult> {
  const figures = measureInWorkerd(options.smoke ? [100] : [1_000, 10_000]);
  return { rows: figures.rows, markdown: rowCostMarkdown(figures.rows) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await run({ smoke: process.argv.includes("--smoke") });
  console.log(result.markdown);
}
