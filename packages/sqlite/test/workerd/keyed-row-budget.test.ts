import type { SessionMessage } from "@contextblocks/sessions";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/** A store on the object's storage (a new database: the keyed layout) whose statements are counted. */
function counted(state: DurableObjectState, sessionId = "chat") {
  const reports: StatementReport[] = [];
  const client = fromDurableObjectStorage(state.storage, { onStatement: (report) => reports.push(report) });
  const store = sqliteTree(client, sessionId);
  const measure = async (run: () => Promise<unknown>) => {
    reports.length = 0;
    await run();
    return {
      read: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
      written: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
      statements: reports.length,
    };
  };
  return { store, measure };
}

describe("the row budget of a new database (keyed layout) on a Durable Object", () => {
  it("an append with search on writes 2 rows (the message and its search row) and reads the same number at 20 and 200 messages", async () => {
    await inObject("keyed-row-budget", async (state) => {
      const { store, measure } = counted(state);
      const costs: Record<number, { append: Awaited<ReturnType<typeof measure>>; search: number }> = {};
      let next = 0;
      for (const length of [20, 200]) {
        while (next < length - 1) await store.appendMessage(message(`m${next}`, `message ${next++}`));
        const append = await measure(() => store.appendMessage(message(`m${next}`, `deploy ${next++}`)));
        const search = await measure(() => store.searchMessages("deploy", 10));
        costs[length] = { append, search: search.written };
      }
      console.log(JSON.stringify(costs));
      expect(costs[20]?.append.written).toBe(2);
      expect(costs[200]?.append.written).toBe(2);
      expect(costs[200]?.append.read).toBe(costs[20]?.append.read);
      // One transaction: the conditional insert, the search row, the outcome (changes(), largest rowid).
      expect(costs[200]?.append.statements).toBe(3);
      // The insert's own and the search row's own: the parent is proven current by the largest search
      // rowid (0 rows), and the search row's context (parent, grandparent) is carried in memory.
      expect(costs[200]?.append.read).toBeLessThanOrEqual(2);
      // The search row was written by the append: a search writes nothing.
      expect(costs[20]?.search).toBe(0);
      expect(costs[200]?.search).toBe(0);
      // The two messages that say it come first (their neighbours follow through their context).
      expect(
        ids(await store.searchMessages("deploy", 10))
          .slice(0, 2)
          .sort(),
      ).toEqual(["m19", "m199"]);
      // A path read: one primary-key seek per message, a statement per 32 of them.
      const history = await measure(() => store.getHistory());
      expect(history.read).toBeLessThanOrEqual(200 + 4);
      expect(history.statements).toBeLessThan(12);
      expect(history.written).toBe(0);
      expect((await measure(() => store.getLatestLeaf())).read).toBeLessThanOrEqual(2);
      expect((await measure(() => store.getPathTokens())).read).toBeLessThanOrEqual(2);
    });
  });

  it("addCompaction writes 1 row and reads its session's newest overlay and the range's two ends only, at 1 and 30 overlays; a retry writes none", async () => {
    await inObject("keyed-row-budget-overlays", async (state) => {
      const { store, measure } = counted(state);
      const other = counted(state, "other");
      for (let index = 0; index < 4; index++)
        await store.appendMessage(message(`m${index}`, `message ${index}`));
      for (const id of ["x", "y"]) await other.store.appendMessage(message(id, `other ${id}`));
      await other.store.addCompaction("another session's summary", "x", "y");
      const first = await measure(() => store.addCompaction("summary 0", "m0", "m1"));
      for (let index = 1; index < 29; index++) await store.addCompaction(`summary ${index}`, "m0", "m1");
      const thirtieth = await measure(() => store.addCompaction("summary 29", "m0", "m2"));
      console.log(JSON.stringify({ first, thirtieth }));
      for (const cost of [first, thirtieth]) {
        expect(cost.written).toBe(1);
        // The newest overlay (the retry check) and the session's largest seq: one seek each; and each end of
        // the range, its path's totals (an end that is not the session's message is refused).
        expect(cost.read).toBeLessThanOrEqual(4);
      }
      const retried = await measure(() => store.addCompaction("summary 29", "m0", "m2"));
      expect(retried.written).toBe(0);
      const overlays = await store.getCompactions();
      expect(overlays.map((overlay) => overlay.summary)).toEqual(
        Array.from({ length: 30 }, (_, index) => `summary ${index}`),
      );
      expect((await other.store.getCompactions()).map((overlay) => overlay.summary)).toEqual([
        "another session's summary",
      ]);
    });
  });

  it("a message without text still gets its (empty) search row, which holds its place in the order", async () => {
    await inObject("keyed-row-budget-empty", async (state) => {
      const { store, measure } = counted(state);
      await store.appendMessage(message("m0", "warm up the schema"));
      const cost = await measure(() =>
        store.appendMessage({
          id: "m1",
          role: "assistant",
          parts: [{ type: "step-start" }],
        } as SessionMessage),
      );
      expect(cost.written).toBe(2);
      await store.appendMessage(message("m2", "after it"));
      expect(ids(await store.getHistory())).toEqual(["m0", "m1", "m2"]);
    });
  });

  it("two stores on one object: the second writer's append is seen, never forked; each append still writes 2 rows", async () => {
    await inObject("keyed-row-budget-writers", async (state) => {
      const one = counted(state);
      const two = counted(state);
      await one.store.appendMessage(message("a", "first"));
      expect(ids(await two.store.getHistory())).toEqual(["a"]);
      await two.store.appendMessage(message("b", "second, by the other store"));
      // The first store's remembered tail is "a": its insert's check sees the newer search row.
      const cost = await one.measure(() => one.store.appendMessage(message("c", "third")));
      expect(cost.written).toBe(2);
      expect(ids(await one.store.getHistory())).toEqual(["a", "b", "c"]);
      expect(ids(await two.store.getHistory())).toEqual(["a", "b", "c"]);
      // Another session's appends move the largest seq too: the tail is read again, the path stays whole.
      const other = counted(state, "other");
      await other.store.appendMessage(message("x", "elsewhere"));
      await one.store.appendMessage(message("d", "fourth"));
      expect(ids(await one.store.getHistory())).toEqual(["a", "b", "c", "d"]);
      expect(ids(await other.store.getHistory())).toEqual(["x"]);
    });
  });
});
