import { checkCompactionAcrossSessions } from "@contextblocks/conformance";
import { estimateMessageTokens, Session, type SessionMessage } from "@contextblocks/sessions";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

/** A tool-heavy turn's tool message: JSON output a chars/4 estimate undercounts. */
function toolMessage(index: number): SessionMessage {
  return {
    id: `m${index}`,
    role: index % 2 ? "assistant" : "user",
    parts: [
      {
        type: "tool-read",
        toolCallId: `c${index}`,
        state: "output-available",
        input: { path: `/file-${index}` },
        output: { lines: Array.from({ length: 20 }, (_, line) => `${index}:${line}`) },
      },
    ],
  };
}

/** Rows read and written by the statements `run` makes. */
function counter(state: DurableObjectState) {
  const reports: StatementReport[] = [];
  const client = fromDurableObjectStorage(state.storage, { onStatement: (report) => reports.push(report) });
  const measure = async (run: () => Promise<unknown>) => {
    reports.length = 0;
    await run();
    return {
      read: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
      written: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
    };
  };
  return { client, measure };
}

describe("per-message token stamps on a Durable Object", () => {
  it("a new Session per turn compacts a tool-heavy history at the same turns as one long-lived Session", async () => {
    await inObject("stamps-compaction", async (state) => {
      const result = await checkCompactionAcrossSessions(
        (sessionId, settings) =>
          new Session({
            store: sqliteTree(state.storage, sessionId),
            compaction: settings.compaction as never,
            threshold: settings.threshold,
          }),
      );
      expect(result.perRequest.length).toBeGreaterThan(0);
    });
  });

  it("a new Session's compactAfter estimate reads a constant number of rows (the leaf's path total), at 20 and 200 messages", async () => {
    await inObject("stamps-rows", async (state) => {
      const { client, measure } = counter(state);
      const store = sqliteTree(client, "chat");
      const costs: Record<number, { read: number; written: number }> = {};
      for (let index = 0; index < 200; index++) {
        await store.appendMessage(toolMessage(index));
        if (index === 19 || index === 199) {
          // A new Session (a new request): its estimate comes from the stored stamps, not a history read.
          const session = new Session({ store: sqliteTree(client, "chat") });
          costs[index + 1] = await measure(() => session.estimateTokens());
          expect(await session.estimateTokens()).toBe(estimateMessageTokens(await store.getHistory()));
        }
      }
      console.log(JSON.stringify({ estimate: costs }));
      expect(costs[200]?.read).toBe(costs[20]?.read);
      expect(costs[200]?.read).toBeLessThanOrEqual(3);
      expect(costs[200]?.written).toBe(0);
      // Appends still write 2 rows with the stamps on the row.
      const append = await measure(() => store.appendMessage(toolMessage(200)));
      expect(append.written).toBe(2);
    });
  });

  it("the calibration of reportUsage is kept per session: a new Session on the same storage uses it", async () => {
    await inObject("stamps-calibration", async (state) => {
      const first = new Session({ store: sqliteTree(state.storage, "chat") });
      for (let index = 0; index < 5; index++) await first.appendMessage(toolMessage(index));
      const estimated = await first.estimateTokens();
      await first.reportUsage({ inputTokens: estimated * 4 });
      const next = new Session({ store: sqliteTree(state.storage, "chat") });
      expect(await next.estimateTokens()).toBe(estimated * 4);
      const other = new Session({ store: sqliteTree(state.storage, "other") });
      await other.appendMessage({ id: "o1", role: "user", parts: [{ type: "text", text: "hello" }] });
      expect(await other.estimateTokens()).toBe(estimateMessageTokens(await other.getHistory()));
    });
  });

  it("an append with a change-feed listener reads no more rows than without", async () => {
    await inObject("feed-rows", async (state) => {
      const { client, measure } = counter(state);
      const silent = new Session({ store: sqliteTree(client, "silent") });
      const listened = new Session({ store: sqliteTree(client, "listened") });
      const events: { parentId: string | null; createdAt: string | null }[] = [];
      listened.subscribe((event) => {
        if (event.type === "message-appended") events.push(event);
      });
      for (let index = 0; index < 10; index++) {
        await silent.appendMessage({
          id: `s${index}`,
          role: "user",
          parts: [{ type: "text", text: `${index}` }],
        });
        await listened.appendMessage({
          id: `l${index}`,
          role: "user",
          parts: [{ type: "text", text: `${index}` }],
        });
      }
      const without = await measure(() =>
        silent.appendMessage({ id: "s10", role: "user", parts: [{ type: "text", text: "10" }] }),
      );
      const withListener = await measure(() =>
        listened.appendMessage({ id: "l10", role: "user", parts: [{ type: "text", text: "10" }] }),
      );
      expect(withListener.read).toBe(without.read);
      expect(events.at(-1)?.parentId).toBe("l9");
      expect(typeof events.at(-1)?.createdAt).toBe("string");
    });
  });
});
