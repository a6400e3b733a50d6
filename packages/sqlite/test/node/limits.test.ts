import { isContextError } from "@contextblocks/core";
import { maximumPathLength } from "@contextblocks/sessions/store-kit";
import { maxRowBytes } from "@contextblocks/sql/store-kit";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/index.js";
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

  it("a compaction summary over a row's 2 MB is refused by name on better-sqlite3 too, and stores nothing", async () => {
    // better-sqlite3 takes the row; a Durable Object would refuse it with a bare SQLITE_TOOBIG.
    const database = new Database(":memory:");
    for (const layout of ["keyed", "lean"] as const) {
      const store = sqliteTree(database, { sessionId: layout, newDatabaseLayout: layout });
      for (const id of ["a", "b"]) {
        const message = { id: `${layout}-${id}`, role: "user", parts: [{ type: "text", text: id }] };
        await store.appendMessage(message);
      }
      const error = await store
        .addCompaction("é".repeat(maxRowBytes / 2), `${layout}-a`, `${layout}-b`)
        .catch((caught: unknown) => caught);
      expect(isContextError(error) && error.code).toBe("INVALID_INPUT");
      expect(String((error as Error).message)).toMatch(
        /^addCompaction: the summary with its row's other text is 2,000,\d{3} bytes as UTF-8; a stored row holds at most 2,000,000/,
      );
      expect(await store.getCompactions()).toEqual([]);
      expect((await store.getHistory()).map((message) => message.id)).toEqual([`${layout}-a`, `${layout}-b`]);
    }
    database.close();
  });

  it("a session id over 60,000 bytes is refused by name on a write, and nothing is stored", async () => {
    // Every row of a session holds its id (a search row twice more, as its token): a Durable Object refused a
    // 1 MB id with a bare SQLITE_TOOBIG, better-sqlite3 stored it in each row.
    const database = new Database(":memory:");
    for (const layout of ["keyed", "lean"] as const) {
      const longest = sqliteTree(database, {
        sessionId: `${layout}`.padEnd(60_000, "s"),
        newDatabaseLayout: layout,
      });
      await longest.appendMessage({
        id: `${layout}-a`,
        role: "user",
        parts: [{ type: "text", text: "tide" }],
      });
      expect(await longest.searchMessages("tide", 5)).toHaveLength(1);
      // 60,001 bytes in 60,001 characters and in 15,001; and 1 MB.
      const over = [`${layout}`.padEnd(60_001, "s"), `${"🦊".repeat(15_000)}a`, "s".repeat(1_000_000)];
      for (const sessionId of over) {
        const store = sqliteTree(database, { sessionId, newDatabaseLayout: layout });
        const refused = {
          code: "INVALID_INPUT",
          message: expect.stringMatching(/session id is [\d,]+ bytes as UTF-8; .* at most 60,000 bytes/),
        };
        await expect(
          store.appendMessage({ id: `${layout}-b`, role: "user", parts: [{ type: "text", text: "tide" }] }),
        ).rejects.toMatchObject(refused);
        // The store's other writes that add a row of the session.
        const bare = new SqliteSessionStore(database, { sessionId, newDatabaseLayout: layout });
        const overlay = {
          id: "o1",
          summary: "s",
          fromMessageId: "x",
          toMessageId: "x",
          createdAt: "2026-01-01",
        };
        await expect(bare.addOverlay(overlay)).rejects.toMatchObject(refused);
        await expect(bare.writeCalibration(1.2)).rejects.toMatchObject(refused);
        // Reads find nothing, as for any session without messages.
        expect(await store.getHistory()).toEqual([]);
      }
    }
    for (const table of ["assistant_messages", "assistant_compactions", "assistant_token_calibration"]) {
      const rows = database.prepare(`SELECT count(*) AS n FROM ${table}`).get();
      expect(rows).toEqual({ n: table === "assistant_messages" ? 2 : 0 });
    }
    database.close();
  });
});
