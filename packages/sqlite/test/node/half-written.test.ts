import type { SessionMessage } from "@contextblocks/sessions";
import { agentsHost } from "@contextblocks/test-kit/sqlite";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";

function message(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/**
 * An `agents`-shaped host (a tagged-template `sql`, no `ctx.storage`, so no transactions) over a real
 * better-sqlite3 database, whose `failAfter(pattern)` makes the next statement matching `pattern` run and
 * then throw once: a connection lost after the write committed.
 */
function faultyHost(database: Database.Database) {
  const host = agentsHost(database);
  let pending: RegExp | null = null;
  return {
    failAfter(pattern: RegExp) {
      pending = pattern;
    },
    sql<T>(strings: TemplateStringsArray, ...values: (string | number | boolean | null)[]): T[] {
      const rows = host.sql<T>(strings, ...values);
      if (pending?.test(strings.join("?"))) {
        pending = null;
        throw new Error("connection lost after the statement ran");
      }
      return rows;
    },
  };
}

/** The tables as agents@0.22.0 (and contextblocks before the lean layout) created them, indexes included. */
function indexedDatabase(): Database.Database {
  const database = new Database(":memory:");
  database.exec(`CREATE TABLE assistant_messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL DEFAULT '',
      parent_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL, created_at DATETIME DEFAULT CURRENT_TIMESTAMP);
    CREATE INDEX idx_assistant_msg_parent ON assistant_messages(parent_id);
    CREATE INDEX idx_assistant_msg_session ON assistant_messages(session_id);`);
  return database;
}

describe.each([
  ["keyed", () => new Database(":memory:")],
  ["lean", () => new Database(":memory:")],
  ["indexed", indexedDatabase],
] as const)("half-written appends on a client without transactions (%s layout)", (layout, open) => {
  for (const step of [/INSERT INTO assistant_messages/, /assistant_leaves/, /INSERT INTO assistant_fts/]) {
    it(`an append failing after ${step.source} is retried: stored once, on the path, found by search`, async () => {
      const database = open();
      const host = faultyHost(database);
      const store = sqliteTree(host, {
        sessionId: "chat",
        newDatabaseLayout: layout === "lean" ? "lean" : "keyed",
      });
      await store.appendMessage(message("a", "hello"));
      host.failAfter(step);
      await store.appendMessage(message("b", "the deploy moved to friday")).catch(() => undefined);
      await store.appendMessage(message("b", "the deploy moved to friday"));
      await store.appendMessage(message("c", "ok"));
      // The search index is built at search time: a search cut short there is redone whole by the next.
      await store.searchMessages("deploy").catch(() => undefined);
      expect((await store.getHistory()).map((entry) => entry.id)).toEqual(["a", "b", "c"]);
      // "b" once, the one hit by its own text; "a" and "c" beside it, as its context (the turn after "a",
      // before "c": message-search.ts) or, "c", as a hit by its neighbour.
      const hits = await store.searchMessages("deploy friday");
      expect(hits.filter((hit) => hit.matchedBy === "text").map((hit) => hit.id)).toEqual(["b"]);
      expect(hits.filter((hit) => hit.id === "b")).toHaveLength(1);
      const around = [
        ...(hits.find((hit) => hit.id === "b")?.context ?? []).map((turn) => turn.id),
        ...hits.filter((hit) => hit.id !== "b").map((hit) => hit.id),
      ];
      expect(around.sort()).toEqual(["a", "c"]);
      database.close();
    });
  }

  it("the same id with other content is still refused", async () => {
    const store = sqliteTree(agentsHost(new Database(":memory:")), "chat");
    await store.appendMessage(message("a", "hello"));
    await expect(store.appendMessage(message("a", "changed"))).rejects.toThrow(/already exists/);
  });

  it("a retried addCompaction after its insert committed adds no second overlay", async () => {
    const database = new Database(":memory:");
    const host = faultyHost(database);
    const store = sqliteTree(host, "chat");
    await store.appendMessage(message("a", "one"));
    await store.appendMessage(message("b", "two"));
    host.failAfter(/INSERT INTO assistant_compactions/);
    await store.addCompaction("summary of a..b", "a", "b").catch(() => undefined);
    const overlay = await store.addCompaction("summary of a..b", "a", "b");
    expect(await store.getCompactions()).toEqual([overlay]);
    database.close();
  });
});
