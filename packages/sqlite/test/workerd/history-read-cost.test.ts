import { Session } from "@contextblocks/sessions";
import type { StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/index.js";
import { inObject } from "./in-object.js";

interface Cost {
  operation: string;
  statements: number;
  rowsRead: number;
}

// Rows read by the history reads on a Durable Object. history() without a byte budget reads the path as
// getHistory does (the lean layout's range reads, about one row per message). historyBatches and a budgeted
// history() take the generic path (SqliteSessionStore has no getPathNodes or getMessages: a getNode walk,
// then getMessage per id): about two rows read per message, for one batch in memory at a time and a read
// that stops early (the first batch reads its own content only).
describe("rows read by streamed history reads on a Durable Object", () => {
  it("stopping after the first batch reads fewer rows than getHistory; the whole path costs more", async () => {
    const costs = await inObject("history-read-cost", async (state) => {
      let reports: StatementReport[] = [];
      const store = new SqliteSessionStore(state.storage, {
        sessionId: "chat",
        onStatement: (report) => reports.push(report),
      });
      const session = new Session({ store });
      for (let index = 0; index < 200; index++) {
        await session.appendMessage({
          id: `m${index}`,
          role: index % 2 ? "assistant" : "user",
          parts: [{ type: "text", text: `message ${index}` }],
        });
      }
      const measure = async (operation: string, run: () => Promise<unknown>): Promise<Cost> => {
        reports = [];
        await run();
        return {
          operation,
          statements: reports.length,
          rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
        };
      };
      return [
        await measure("getHistory(), 200 messages", () => session.getHistory()),
        await measure("history(), 200 messages", () => session.history()),
        await measure("historyBatches({ batchSize: 20 }), first batch only", async () => {
          for await (const _batch of session.historyBatches({ batchSize: 20 })) break;
        }),
        await measure("getRecentHistory(2_000, 1)", () => session.getRecentHistory(2_000, 1)),
      ];
    });
    console.log(
      [
        "| operation | statements | rows read |",
        "|---|---:|---:|",
        ...costs.map((cost) => `| ${cost.operation} | ${cost.statements} | ${cost.rowsRead} |`),
      ].join("\n"),
    );
    const byName = new Map(costs.map((cost) => [cost.operation, cost]));
    const whole = byName.get("getHistory(), 200 messages") as Cost;
    const read = byName.get("history(), 200 messages") as Cost;
    const first = byName.get("historyBatches({ batchSize: 20 }), first batch only") as Cost;
    expect(whole.rowsRead).toBeGreaterThan(0);
    // history() reads the path as getHistory does: about one row per message, a few statements.
    expect(read.rowsRead).toBe(whole.rowsRead);
    expect(read.rowsRead).toBeLessThanOrEqual(200 + 10);
    expect(read.statements).toBeLessThan(20);
    // The generic batched path walks the parents one getNode at a time: one statement per message at least.
    expect(first.statements).toBeGreaterThanOrEqual(200);
  });
});
