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
  it("adds one row written per changed write and reads a constant number of rows, whatever the number of versions", async () => {
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
        await measure("set with history, version 2 (ring not full)", () => kept.set("v1")),
      ];
      for (let index = 2; index < 60; index++) await kept.set(`v${index}`);
      rows.push(
        await measure("set with history, version 61 (ring of 50 full)", () => kept.set("v60")),
        await measure("set with history, unchanged content", () => kept.set("v60")),
        await measure("setIf with history, changed content", () => kept.setIf("v60", "v61")),
        await measure(
          "history(), 50 versions kept",
          async () => (await kept.versions?.({ limit: 50 })) ?? [],
        ),
      );
      const versions = state.storage.sql
        .exec("SELECT COUNT(*) AS n FROM contextblocks_block_history WHERE label = 'kept'")
        .one().n;
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
    expect(byName.get("set without history, changed content")?.rowsWritten).toBe(1);
    const early = byName.get("set with history, version 2 (ring not full)");
    const late = byName.get("set with history, version 61 (ring of 50 full)");
    expect(early?.rowsWritten).toBe(2);
    expect(late?.rowsWritten).toBe(2);
    // The next version number is on the block's row: no scan of the ring, so rows read stay small and the
    // same with 1 or 50 versions kept (before, a write read about retention + 2 rows).
    expect(late?.rowsRead).toBe(early?.rowsRead);
    expect(late?.rowsRead).toBeLessThanOrEqual(4);
    expect(byName.get("setIf with history, changed content")?.rowsRead).toBeLessThanOrEqual(4);
    expect(byName.get("set with history, unchanged content")?.rowsWritten).toBe(0);
    expect(costs.versions).toBe(50);
  });
});
