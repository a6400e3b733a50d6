import { Session } from "@contextblocks/sessions";
import type { StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

interface Cost {
  operation: string;
  statements: number;
  rowsRead: number;
}

// Rows read by the history reads on a Durable Object. history(), a budgeted history() and historyBatches()
// read the path through SqliteSessionStore.getPathMessages, the read getHistory makes (the lean layout's
// range reads): about one row per message, a few statements, where the generic path (a getNode walk, then
// getMessage per id) read about two rows and made a statement per message. Leaf first with a budget, the
// walk stops one message past it: only the newest rows are read.
describe("rows read by streamed history reads on a Durable Object", () => {
  it("history(), history({ maxBytes }) and historyBatches() read about one row per message", async () => {
    const costs = await inObject("history-read-cost", async (state) => {
      let reports: StatementReport[] = [];
      const store = sqliteTree(state.storage, {
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
        await measure("history({ maxBytes: 5_000 }), 200 messages", () =>
          session.history({ maxBytes: 5_000 }),
        ),
        await measure("historyBatches({ batchSize: 20, maxBatchBytes: 1_000 }), 200 messages", async () => {
          let count = 0;
          for await (const batch of session.historyBatches({ batchSize: 20, maxBatchBytes: 1_000 })) {
            count += batch.length;
          }
          expect(count).toBe(200);
        }),
        await measure("history({ maxBytes: 2_000, newestFirst: true }), 200 messages", () =>
          session.history({ maxBytes: 2_000, newestFirst: true }),
        ),
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
    const budgeted = byName.get("history({ maxBytes: 5_000 }), 200 messages") as Cost;
    const batches = byName.get(
      "historyBatches({ batchSize: 20, maxBatchBytes: 1_000 }), 200 messages",
    ) as Cost;
    const first = byName.get("historyBatches({ batchSize: 20 }), first batch only") as Cost;
    const newest = byName.get("history({ maxBytes: 2_000, newestFirst: true }), 200 messages") as Cost;
    expect(whole.rowsRead).toBeGreaterThan(0);
    // history() reads the path as getHistory does: about one row per message, a few statements.
    expect(read.rowsRead).toBe(whole.rowsRead);
    expect(read.rowsRead).toBeLessThanOrEqual(200 + 10);
    expect(read.statements).toBeLessThan(20);
    // The budgeted and batched reads make the same path read (plus the overlays' read): the generic path
    // walked the parents one getNode at a time, a statement and about two rows per message.
    for (const cost of [budgeted, batches, first]) {
      expect(cost.rowsRead).toBeLessThanOrEqual(whole.rowsRead + 2);
      expect(cost.statements).toBeLessThan(20);
    }
    // Leaf first, the budget stops the walk: only the newest rows are read (about 2,000 bytes of them).
    expect(newest.rowsRead).toBeLessThan(whole.rowsRead / 3);
    // The window of the newest messages (what SessionHistoryPlugin loads on every model call): the same.
    const recent = byName.get("getRecentHistory(2_000, 1)") as Cost;
    expect(recent.rowsRead).toBeLessThan(whole.rowsRead / 3);
  });
});
