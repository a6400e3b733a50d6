import { ContextBlocks } from "@contextblocks/core";
import { Session, SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { fromBetterSqlite3 } from "@contextblocks/sql";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import { sqliteTree } from "../sqlite-tree.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

// The scenarios every backend shares (blocks, tools, search, compaction, clearing) run once per backend in
// tests/backends; here: what only SQLite accepts.
describe("sessions on sqliteBackend", () => {
  it("sqliteBackend accepts better-sqlite3, a SqlClient and an agents-style sql host; new Session takes a store", async () => {
    const database = temporary.database;
    const hosts = [database, fromBetterSqlite3(database), agentsHost(database)];
    await new SessionBuilder(sqliteBackend(database))
      .forSession("same")
      .build()
      .appendMessage(message("m1", "hello"));
    for (const host of hosts) {
      const session = new SessionBuilder(sqliteBackend(host)).forSession("same").build();
      expect(ids(await session.getHistory())).toEqual(["m1"]);
    }
    const direct = new Session({ store: sqliteTree(database, "same") });
    expect(ids(await direct.getHistory())).toEqual(["m1"]);
    expect(() => sqliteBackend(42 as never)).toThrow();
  });

  it("the direct constructor takes a store and a ContextBlocks", async () => {
    const backend = sqliteBackend(temporary.database);
    const session = new Session({
      store: sqliteTree(temporary.database, "chat"),
      context: new ContextBlocks(
        [{ label: "soul", provider: { get: async () => "You are helpful." } }, { label: "notes" }],
        null,
        (label) => backend.block(label, "chat"),
      ),
    });
    await session.appendMessage(message("a", "hi"));
    expect(await session.context.freezeSystemPrompt()).toContain("You are helpful.");
    expect(session.context.getBlock("notes")?.writable).toBe(true);
  });
});
