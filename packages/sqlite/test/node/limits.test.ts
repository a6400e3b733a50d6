import { isContextError } from "@contextblocks/core";
import { maximumPathLength } from "@contextblocks/sessions/store-kit";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

describe("limits say so", () => {
  it("getHistory of a path longer than the maximum refuses instead of dropping the oldest messages", async () => {
    const database = new Database(":memory:");
    const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "keyed" });
    await store.appendMessage({ id: "m0", role: "user", parts: [{ type: "text", text: "first" }] });
    const length = maximumPathLength + 5;
    // A long chain written in one statement (the API would take minutes for 100,005 appends).
    // On the keyed layout each message has its `seq` and a search row under it (the order).
    database
      .prepare(
        `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
         INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth, seq)
         SELECT 'm' || n, 'chat', 'm' || (n - 1), 'user',
           json_object('id', 'm' || n, 'role', 'user', 'parts', json_array()), n, n + 1 FROM seq`,
      )
      .run(length - 1);
    database.exec(`INSERT INTO assistant_fts (rowid, id, session_id, role, content)
      SELECT seq, id, session_id, role, '' FROM assistant_messages WHERE id <> 'm0'`);
    database
      .prepare("UPDATE assistant_leaves SET leaf_id = ? WHERE session_id = 'chat'")
      .run(`m${length - 1}`);
    const error = await store.getHistory().catch((caught: unknown) => caught);
    expect(isContextError(error) && error.code).toBe("INVALID_INPUT");
    expect(String((error as Error).message)).toMatch(/longer than 100000 messages/);
    const recent = await store.getRecentHistory(null, 10_000);
    expect(recent.truncated).toBe(true);
    database.close();
  }, 120_000);
});
