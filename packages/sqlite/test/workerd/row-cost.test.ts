import type { ContextConfig } from "@contextblocks/core";
import type { StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { createDurableContext, SqliteContextProvider } from "../../src/index.js";
import { inObject } from "./in-object.js";

/** Rows and statements of one operation, summed from onStatement reports. */
interface Cost {
  operation: string;
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

function meter() {
  let reports: StatementReport[] = [];
  return {
    onStatement: (report: StatementReport) => reports.push(report),
    async measure(operation: string, run: () => Promise<unknown>): Promise<Cost> {
      reports = [];
      await run();
      return {
        operation,
        statements: reports.length,
        rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
        rowsWritten: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
      };
    },
  };
}

/** A markdown table of the costs, printed for the README. */
function table(title: string, costs: readonly Cost[]): string {
  const lines = [
    `${title}`,
    "| operation | statements | rows read | rows written |",
    "|---|---:|---:|---:|",
    ...costs.map(
      (cost) => `| ${cost.operation} | ${cost.statements} | ${cost.rowsRead} | ${cost.rowsWritten} |`,
    ),
  ];
  return lines.join("\n");
}

const writableBlocks = (count: number): ContextConfig[] =>
  Array.from({ length: count }, (_, index) => ({ label: `block-${index}`, description: `Block ${index}` }));

describe("row cost on a Durable Object (figures for the README)", () => {
  it("measures a provider's get and set", async () => {
    const costs = await inObject("row-cost-provider", async (state) => {
      const { onStatement, measure } = meter();
      // Without history, as agents/context writes (history-row-cost.test.ts measures a write with it).
      const provider = new SqliteContextProvider(state.storage, {
        label: "memory",
        onStatement,
        versions: false,
      });
      const other = new SqliteContextProvider(state.storage, {
        label: "other",
        onStatement,
        versions: false,
      });
      return [
        await measure("get, no table yet", () => provider.get()),
        await measure("set, first write to the database (creates the table)", () => provider.set("v1")),
        await measure("set, new row", () => other.set("v1")),
        await measure("get, existing row", () => provider.get()),
        await measure("get, missing row", () =>
          new SqliteContextProvider(state.storage, { label: "none", onStatement, versions: false }).get(),
        ),
        await measure("set, changed content", () => provider.set("v2")),
        await measure("set, unchanged content", () => provider.set("v2")),
        await measure("set, 1 MB content", () => provider.set("x".repeat(1024 * 1024))),
      ];
    });
    console.log(table("SqliteContextProvider (Durable Object)", costs));
    const byName = new Map(costs.map((cost) => [cost.operation, cost]));
    expect(byName.get("get, existing row")).toMatchObject({ statements: 1, rowsRead: 1, rowsWritten: 0 });
    expect(byName.get("get, no table yet")).toMatchObject({ rowsRead: 0, rowsWritten: 0 });
    expect(byName.get("get, missing row")).toMatchObject({ statements: 1, rowsRead: 0, rowsWritten: 0 });
    expect(byName.get("set, unchanged content")).toMatchObject({ statements: 1, rowsWritten: 0 });
    expect(byName.get("set, changed content")).toMatchObject({ statements: 1, rowsRead: 1, rowsWritten: 1 });
  });

  it.each([1, 5, 20])("measures freeze and refresh with %i writable blocks", async (count) => {
    const costs = await inObject(`row-cost-context-${count}`, async (state) => {
      const { onStatement, measure } = meter();
      const build = () => createDurableContext(state.storage, writableBlocks(count), { onStatement });
      const first = build();
      const results: Cost[] = [];
      for (let index = 0; index < count; index++) await first.setBlock(`block-${index}`, `content ${index}`);
      results.push(await measure("first freeze (nothing stored)", () => first.freezeSystemPrompt()));
      results.push(await measure("warm freeze", () => first.freezeSystemPrompt()));
      results.push(await measure("setBlock", () => first.setBlock("block-0", "changed")));
      results.push(await measure("refresh (one block changed)", () => first.refreshSystemPrompt()));
      results.push(await measure("refresh (nothing changed)", () => first.refreshSystemPrompt()));
      const cold = build();
      results.push(await measure("cold freeze (prompt stored)", () => cold.freezeSystemPrompt()));
      results.push(await measure("warm freeze after cold", () => cold.freezeSystemPrompt()));
      return results;
    });
    console.log(table(`createDurableContext, ${count} writable block(s) (Durable Object)`, costs));
    const byName = new Map(costs.map((cost) => [cost.operation, cost]));
    // The physical limits: one row read for a cold freeze with a prompt store, nothing for a warm one.
    expect(byName.get("cold freeze (prompt stored)")).toEqual({
      operation: "cold freeze (prompt stored)",
      statements: 1,
      rowsRead: 1,
      rowsWritten: 0,
    });
    expect(byName.get("warm freeze")).toMatchObject({ statements: 0, rowsRead: 0, rowsWritten: 0 });
    expect(byName.get("warm freeze after cold")).toMatchObject({
      statements: 0,
      rowsRead: 0,
      rowsWritten: 0,
    });
    expect(byName.get("refresh (nothing changed)")).toMatchObject({ rowsRead: count + 1, rowsWritten: 0 });
    // Versions are on: the block's version is kept in its own row, so a write is one row, as agents/context's.
    expect(byName.get("setBlock")).toMatchObject({ rowsRead: 1, rowsWritten: 1 });
  });
});
