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

// Rows read by the streamed history reads on a Durable Object. SqliteSessionStore has no getPathNodes or
// getMessages, so Session.history / historyBatches take the generic path (a getNode walk, then getMessage
// per id): about two rows read per message (one for the walk, one for the content), against getHistory's
// one. A batched getMessages (primary-key reads in one batch) was measured at the same rows read (an IN list
// read more), and a recursive path query without content reads two rows per message, so neither is used:
// what streaming buys here is stopping early (the first batch reads its own content only) and one batch
// in memory at a time, not fewer rows for the whole path.
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
    const streamed = byName.get("history(), 200 messages") as Cost;
    const first = byName.get("historyBatches({ batchSize: 20 }), first batch only") as Cost;
    expect(whole.rowsRead).toBeGreaterThan(0);
    // The generic path walks the parents one getNode at a time: at least one statement per message.
    expect(streamed.statements).toBeGreaterThanOrEqual(200);
    // The first batch reads its 20 messages' content, but still walks the whole path first.
    expect(first.statements).toBeLessThan(streamed.statements);
  });
});
