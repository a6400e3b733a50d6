import type { SessionMessage } from "@contextblocks/sessions";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/** A store on the object's storage whose statements are counted; `measure` gives one call's rows. */
function counted(state: DurableObjectState, sessionId = "chat") {
  const reports: StatementReport[] = [];
  const client = fromDurableObjectStorage(state.storage, { onStatement: (report) => reports.push(report) });
  const store = sqliteTree(client, { sessionId, newDatabaseLayout: "lean" });
  const measure = async (run: () => Promise<unknown>) => {
    reports.length = 0;
    await run();
    return {
      read: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
      written: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
      statements: reports.length,
    };
  };
  return { store, measure, reports };
}

/** The tables as agents@0.22.0 (and contextblocks before the lean layout) created them. */
function createIndexedTables(state: DurableObjectState): void {
  state.storage.sql.exec(`CREATE TABLE assistant_messages (id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL DEFAULT '', parent_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP)`);
  state.storage.sql.exec("CREATE INDEX idx_assistant_msg_parent ON assistant_messages(parent_id)");
  state.storage.sql.exec("CREATE INDEX idx_assistant_msg_session ON assistant_messages(session_id)");
}

describe("the row budget of a lean database (created explicitly) on a Durable Object", () => {
  it("an append writes 2 rows and reads the same few at 10 and 300 messages; a path read is 1 row per message", async () => {
    await inObject("row-budget", async (state) => {
      const { store, measure } = counted(state);
      await store.appendMessage(message("m0", "warm up the schema"));
      const costs = [];
      for (let index = 1; index <= 300; index++) {
        costs.push(await measure(() => store.appendMessage(message(`m${index}`, `message number ${index}`))));
      }
      const early = costs[9];
      const late = costs[299];
      expect(late?.written).toBe(2);
      expect(late?.read).toBe(early?.read);
      // The conditional insert: the parent's row (its source), the check that nothing newer was stored
      // (another writer), and the insert's own read; the id's and its tombstone's probes read nothing when
      // they find nothing, and the outcome is read with changes() / last_insert_rowid() (no row).
      expect(late?.read).toBeLessThanOrEqual(3);
      expect(late?.statements).toBe(2);
      const history = await measure(() => store.getHistory());
      console.log(JSON.stringify({ append: late, history }));
      // 301 messages: one rowid seek each, the leaf's check and the overlays' read.
      expect(history.read).toBeLessThanOrEqual(301 + 4);
      expect(history.written).toBe(0);
      const leaf = await measure(() => store.getLatestLeaf());
      expect(leaf.read).toBeLessThanOrEqual(2);
      expect(await store.getPathLength()).toBe(301);
    });
  });

  it("with other sessions interleaved on the same tables, an append still writes 2 rows", async () => {
    await inObject("row-budget-sessions", async (state) => {
      const one = counted(state, "one");
      const two = counted(state, "two");
      for (let index = 0; index < 20; index++) {
        await one.store.appendMessage(message(`one-${index}`, `one ${index}`));
        await two.store.appendMessage(message(`two-${index}`, `two ${index}`));
      }
      const cost = await one.measure(() => one.store.appendMessage(message("one-20", "one 20")));
      expect(cost.written).toBe(2);
      expect(ids(await one.store.getHistory())).toEqual(
        Array.from({ length: 21 }, (_, index) => `one-${index}`),
      );
      expect(ids(await two.store.getHistory())).toHaveLength(20);
    });
  });

  it("two stores on one object never fork the path, and a deleted leaf is noticed", async () => {
    await inObject("row-budget-writers", async (state) => {
      const first = sqliteTree(state.storage, { sessionId: "chat", newDatabaseLayout: "lean" });
      const second = sqliteTree(state.storage, { sessionId: "chat", newDatabaseLayout: "lean" });
      await first.appendMessage(message("a", "a"));
      await second.appendMessage(message("b", "b"));
      await first.appendMessage(message("c", "c"));
      await Promise.all([first.appendMessage(message("d", "d")), second.appendMessage(message("e", "e"))]);
      expect(ids(await first.getHistory())).toHaveLength(5);
      expect((await first.getTree()).filter((node) => node.parentId === null)).toHaveLength(1);
      const leaf = (await first.getLatestLeaf())?.id ?? "";
      await second.deleteMessages([leaf]);
      await first.appendMessage(message("f", "f"));
      expect(ids(await second.getHistory())).toEqual([...ids(await first.getHistory())]);
      expect(ids(await first.getHistory())).toHaveLength(5);
      expect(ids(await first.getHistory())).not.toContain(leaf);
    });
  });

  it("an id deleted while a stored message names it as parent is refused; with no child left it is taken", async () => {
    await inObject("row-budget-tombstone", async (state) => {
      const store = sqliteTree(state.storage, { sessionId: "chat", newDatabaseLayout: "lean" });
      await store.appendMessage(message("a", "a"));
      await store.appendMessage(message("b", "b"));
      await store.appendMessage(message("c", "c"));
      await store.deleteMessages(["b"]);
      await expect(store.appendMessage(message("b", "again"))).rejects.toThrow(/still the parent/);
      await store.deleteMessages(["c"]);
      await store.appendMessage(message("b", "again"));
      expect(ids(await store.getHistory())).toEqual(["a", "b"]);
      expect(await store.getPathLength()).toBe(2);
    });
  });

  it("a database with agents@0.22.0's indexes keeps them and its leaf pointer, and works as before", async () => {
    await inObject("row-budget-indexed", async (state) => {
      createIndexedTables(state);
      state.storage.sql.exec(
        `INSERT INTO assistant_messages (id, session_id, parent_id, role, content) VALUES
          ('old-1', 'chat', NULL, 'user', ?), ('old-2', 'chat', 'old-1', 'assistant', ?)`,
        JSON.stringify(message("old-1", "written by agents")),
        JSON.stringify({ ...message("old-2", "its answer"), role: "assistant" }),
      );
      const { store, measure } = counted(state);
      await store.appendMessage(message("new-1", "ours"));
      const cost = await measure(() => store.appendMessage(message("new-2", "ours again")));
      // The row and its three index entries, and the leaf pointer: the indexed layout's cost.
      expect(cost.written).toBe(5);
      expect(ids(await store.getHistory())).toEqual(["old-1", "old-2", "new-1", "new-2"]);
      const indexes = state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'assistant_messages'")
        .toArray()
        .map((row) => row.name);
      expect(indexes).toContain("idx_assistant_msg_parent");
      expect(await store.getPathLength()).toBe(4);
    });
  });
});
