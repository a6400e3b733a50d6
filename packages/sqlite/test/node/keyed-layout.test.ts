import type { SessionMessage } from "@contextblocks/sessions";
import { agentsHost } from "@contextblocks/test-kit/sqlite";
import { AgentSessionProvider } from "agents-session/experimental/memory/session";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { say } from "../mixed-writer.js";
import { type SqliteTree, sqliteTree } from "../sqlite-tree.js";

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/** Children per parent in the session's tree: a fork is a parent with more than one. */
async function forks(store: SqliteTree): Promise<string[]> {
  const children = new Map<string | null, number>();
  for (const node of await store.getTree()) {
    children.set(node.parentId, (children.get(node.parentId) ?? 0) + 1);
  }
  return [...children].filter(([, count]) => count > 1).map(([parent]) => String(parent));
}

describe("the keyed layout (a new database)", () => {
  it("keys messages by id alone and orders them by their search rows", () => {
    const database = new Database(":memory:");
    const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "keyed" });
    return (async () => {
      await store.appendMessage(message("a", "hello"));
      const table = database
        .prepare("SELECT sql FROM sqlite_master WHERE name = 'assistant_messages'")
        .get() as { sql: string };
      expect(table.sql).toMatch(/WITHOUT ROWID/);
      const indexes = database
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'assistant_messages'")
        .all() as { name: string }[];
      // Only the primary key's own b-tree (a WITHOUT ROWID table is its primary key).
      expect(indexes.filter((index) => !index.name.startsWith("sqlite_autoindex"))).toEqual([]);
      const row = database
        .prepare(
          "SELECT m.seq AS seq, f.rowid AS searchRow FROM assistant_messages m JOIN assistant_fts f ON f.id = m.id",
        )
        .get() as { seq: number; searchRow: number };
      expect(row.seq).toBe(row.searchRow);
      database.close();
    })();
  });

  it("two stores on a client without transactions, appending at once, never fork (a taken seq is given back)", async () => {
    const database = new Database(":memory:");
    const host = agentsHost(database);
    const first = sqliteTree(host, "chat");
    const second = sqliteTree(host, "chat");
    await first.appendMessage(message("m0", "start"));
    await second.getHistory();
    const appends: Promise<unknown>[] = [];
    for (let index = 1; index <= 20; index++) {
      const store = index % 2 ? first : second;
      appends.push(store.appendMessage(message(`m${index}`, `message ${index}`)));
    }
    await Promise.all(appends);
    const history = await first.getHistory();
    expect(history).toHaveLength(21);
    expect(new Set(ids(history)).size).toBe(21);
    expect(await forks(first)).toEqual([]);
    // Every message has exactly one search row, under its own seq.
    const unordered = database
      .prepare(`SELECT COUNT(*) AS n FROM assistant_messages m
        WHERE NOT EXISTS (SELECT 1 FROM assistant_fts f WHERE f.rowid = m.seq AND f.id = m.id)`)
      .get() as { n: number };
    expect(unordered.n).toBe(0);
    expect((database.prepare("SELECT COUNT(*) AS n FROM assistant_fts").get() as { n: number }).n).toBe(21);
    database.close();
  });

  it("a message row left without its search row is not taken as stored: a retry appends it under the tail", async () => {
    const database = new Database(":memory:");
    const store = sqliteTree(agentsHost(database), "chat");
    await store.appendMessage(message("a", "hello"));
    await store.appendMessage(message("b", "the deploy moved to friday"));
    // What a failure between the two statements of an append leaves: the row, no search row.
    database.prepare("DELETE FROM assistant_fts WHERE id = 'b'").run();
    const fresh = sqliteTree(agentsHost(database), "chat");
    expect(ids(await fresh.getHistory())).toEqual(["a"]);
    await fresh.appendMessage(message("b", "the deploy moved to friday, for real"));
    expect(ids(await fresh.getHistory())).toEqual(["a", "b"]);
    expect((await fresh.getMessage("b"))?.parts).toEqual([
      { type: "text", text: "the deploy moved to friday, for real" },
    ]);
    expect(ids(await fresh.searchMessages("deploy friday"))).toContain("b");
    database.close();
  });

  it("agents@0.22.0 opening a keyed database fails loudly and stores nothing", async () => {
    const database = new Database(":memory:");
    const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "keyed" });
    await store.appendMessage(message("a", "hello"));
    const agents = new AgentSessionProvider(agentsHost(database), "chat");
    expect(() => agents.appendMessage(say("x", "from agents"))).toThrow(/seq|rowid/);
    expect(() => agents.getLatestLeaf()).toThrow(/rowid/);
    expect(ids(await store.getHistory())).toEqual(["a"]);
    await store.appendMessage(message("b", "still ours"));
    expect(ids(await store.getHistory())).toEqual(["a", "b"]);
    database.close();
  });
});

describe("the tail check, keyed and lean", () => {
  for (const layout of ["keyed", "lean"] as const) {
    it(`${layout}: another session's newest message deleted and its rowid given to this session's next message: no fork`, async () => {
      const database = new Database(":memory:");
      // Separate clients (each host is its own client), so each store remembers its own tail.
      const open = (sessionId: string) =>
        sqliteTree(agentsHost(database), { sessionId, newDatabaseLayout: layout });
      const writer = open("one");
      const other = open("two");
      await writer.appendMessage(message("l", "the leaf"));
      await other.appendMessage(message("y", "in the other session"));
      const stale = open("one");
      // Reads the tail: leaf "l", the table's (or search table's) largest rowid that of "y".
      expect((await stale.getLatestLeaf())?.id).toBe("l");
      await other.deleteMessages(["y"]);
      // "z" takes the rowid "y" had: the largest rowid is what `stale` saw.
      await writer.appendMessage(message("z", "after the leaf"));
      await stale.appendMessage(message("w", "after z"));
      expect(ids(await stale.getHistory())).toEqual(["l", "z", "w"]);
      expect(await forks(stale)).toEqual([]);
      database.close();
    });
  }
});

describe("the keyed layout's empty search rows", () => {
  it("a message without text is never a search hit, not even through the turns after it", async () => {
    const database = new Database(":memory:");
    const store = sqliteTree(database, { sessionId: "chat", newDatabaseLayout: "keyed" });
    await store.appendMessage(message("a", "where is the chandlery"));
    await store.appendMessage({
      id: "image",
      role: "user",
      parts: [{ type: "file", mediaType: "image/png", url: "data:image/png;base64,AA==" }],
    } as unknown as SessionMessage);
    await store.appendMessage(message("b", "the chandlery opens at eight"));
    // "image" has an (empty) search row and is the parent of "b": it is lent a share, yet never returned.
    expect(ids(await store.searchMessages("chandlery")).sort()).toEqual(["a", "b"]);
    database.close();
  });
});
