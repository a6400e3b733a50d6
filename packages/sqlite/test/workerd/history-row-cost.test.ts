import type { StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { SqliteContextProvider } from "../../src/index.js";
import { inObject } from "./in-object.js";

interface Cost {
  operation: string;
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

describe("row cost of a write with history on a Durable Object", () => {
  it("writes one row per changed write, one batch row more every 16, and reads a constant number of rows", async () => {
    const costs = await inObject("history-row-cost", async (state) => {
      let reports: StatementReport[] = [];
      const onStatement = (report: StatementReport) => reports.push(report);
      const measure = async (operation: string, run: () => Promise<unknown>): Promise<Cost> => {
        reports = [];
        await run();
        return {
          operation,
          statements: reports.length,
          rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
          rowsWritten: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
        };
      };
      const plain = new SqliteContextProvider(state.storage, {
        label: "plain",
        onStatement,
        versions: false,
      });
      // History is on by default.
      const kept = new SqliteContextProvider(state.storage, { label: "kept", onStatement });
      await plain.set("v0");
      await kept.set("v0");
      const rows: Cost[] = [
        await measure("set without history, changed content", () => plain.set("v1")),
        await measure("set with history, version 2", () => kept.set("v1")),
      ];
      for (let index = 2; index < 60; index++) await kept.set(`v${index}`);
      rows.push(
        await measure("set with history, version 61 (50 kept)", () => kept.set("v60")),
        await measure("set with history, unchanged content", () => kept.set("v60")),
        await measure("setIf with history, changed content", () => kept.setIf("v60", "v61")),
      );
      // Version 64 fills the row's sixteen; the write of version 65 moves them to a batch.
      await kept.set("v62");
      rows.push(
        await measure("set with history, version 64 (row's recent versions full)", () => kept.set("v63")),
        await measure("set with history, version 65 (moves them to a batch)", () => kept.set("v64")),
        await measure("set with history, first write of a new store (instance)", () =>
          new SqliteContextProvider(state.storage, { label: "kept", onStatement }).set("v65"),
        ),
      );
      const amortized = await measure("160 writes with history, one store", async () => {
        for (let index = 0; index < 160; index++) await kept.set(`w${index}`);
      });
      rows.push(
        amortized,
        await measure(
          "history(), 50 versions kept",
          async () => (await kept.versions?.({ limit: 50 })) ?? [],
        ),
      );
      const versions = (await kept.versions?.({ limit: 50 }))?.length;
      return { rows, versions };
    });
    console.log(
      [
        "| operation | statements | rows read | rows written |",
        "|---|---:|---:|---:|",
        ...costs.rows.map((c) => `| ${c.operation} | ${c.statements} | ${c.rowsRead} | ${c.rowsWritten} |`),
      ].join("\n"),
    );
    const byName = new Map(costs.rows.map((cost) => [cost.operation, cost]));
    const cost = (name: string) => {
      const found = byName.get(name);
      if (found === undefined) throw new Error(`no row ${name}`);
      return found;
    };
    expect(cost("set without history, changed content").rowsWritten).toBe(1);
    // The version is in the block's own row: one row read, one written, as agents/context (a second
    // statement, `SELECT changes()`, reads none).
    for (const name of ["set with history, version 2", "set with history, version 61 (50 kept)"]) {
      expect(cost(name)).toMatchObject({ rowsRead: 1, rowsWritten: 1 });
    }
    expect(cost("set with history, version 64 (row's recent versions full)")).toMatchObject({
      rowsWritten: 1,
    });
    expect(cost("set with history, version 65 (moves them to a batch)")).toMatchObject({
      rowsRead: 2,
      rowsWritten: 2,
    });
    // A new store does not know how full the row is: it reads it once more, writes one row.
    expect(cost("set with history, first write of a new store (instance)")).toMatchObject({
      rowsRead: 2,
      rowsWritten: 1,
    });
    // One batch row per 16 writes: 1.0625 rows written and read per write.
    expect(cost("160 writes with history, one store")).toMatchObject({ rowsRead: 170, rowsWritten: 170 });
    expect(cost("setIf with history, changed content").rowsWritten).toBe(1);
    expect(cost("set with history, unchanged content").rowsWritten).toBe(0);
    expect(cost("history(), 50 versions kept").rowsRead).toBeLessThanOrEqual(10);
    expect(costs.versions).toBe(50);
  });
});
