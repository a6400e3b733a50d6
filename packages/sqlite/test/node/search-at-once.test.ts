import { SessionManager } from "@contextblocks/sessions";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { AgentSessionProvider } from "agents-session/experimental/memory/session";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";
import type { NewSessionLayout } from "../../src/store-kit.js";

const say = (id: string, role: "user" | "assistant", text: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text }],
});

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

const queries = ["ferry", "when does the ferry leave", "lighthouse keeper", "harbour", "nothing here", "a"];

/** Two sessions of a few turns, written through the (async) manager, and a tool call with no text. */
async function twoSessions(manager: SessionManager): Promise<{ first: string; second: string }> {
  const first = (await manager.create("ferries")).id;
  const second = (await manager.create("lighthouses")).id;
  const ferries = manager.getSession(first);
  await ferries.appendMessage(say("f1", "user", "When does the ferry leave the harbour?"));
  await ferries.appendMessage(say("f2", "assistant", "The first ferry leaves at nine."));
  await ferries.appendMessage({
    id: "f3",
    role: "assistant",
    parts: [{ type: "tool-timetable", toolCallId: "t1", state: "input-available", input: {} }],
  } as never);
  const lighthouses = manager.getSession(second);
  await lighthouses.appendMessage(say("l1", "user", "Who keeps the lighthouse?"));
  await lighthouses.appendMessage(say("l2", "assistant", "The lighthouse keeper lives by the harbour."));
  return { first, second };
}

describe.each(["lean", "keyed"] as NewSessionLayout[])("search answered at once (%s layout)", (layout) => {
  it("gives the hits the async search gives, messages appended since the last search included", async () => {
    const database = new Database(":memory:");
    const backend = sqliteBackend(database, { newDatabaseLayout: layout });
    const manager = new SessionManager(backend);
    const { first } = await twoSessions(manager);
    const searchAtOnce = manager.synchronous?.search;
    expect(searchAtOnce).toBeTypeOf("function");
    if (searchAtOnce === undefined) return;
    // Nothing was searched yet: the index catches up inside the synchronous call.
    const hits = searchAtOnce("ferry harbour");
    expect(Array.isArray(hits)).toBe(true);
    expect(hits.map((hit) => hit.id)).toContain("f1");
    for (const query of queries) {
      expect(searchAtOnce(query, { limit: 5 })).toEqual(await manager.search(query, { limit: 5 }));
    }
    // An append after the last search is found by the next one, at once.
    await manager.getSession(first).appendMessage(say("n1", "user", "The night ferry was cancelled."));
    expect(searchAtOnce("night ferry cancelled").map((hit) => hit.id)[0]).toBe("n1");
    database.close();
  });

  it("refuses a bad query or limit at once, naming it, and stores nothing", async () => {
    const database = new Database(":memory:");
    const manager = new SessionManager(sqliteBackend(database, { newDatabaseLayout: layout }));
    await twoSessions(manager);
    const searchAtOnce = manager.synchronous?.search;
    if (searchAtOnce === undefined) throw new Error("expected a synchronous search");
    const searchRows = () => database.prepare("SELECT count(*) AS n FROM assistant_fts").get();
    const before = searchRows();
    expect(() => searchAtOnce(42 as unknown as string)).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining("query") }),
    );
    expect(() => searchAtOnce("ferry", { limit: 0 })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT", message: expect.stringContaining("limit") }),
    );
    expect(() => searchAtOnce("ferry", "ten" as never)).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    await expect(manager.search("ferry", "ten" as never)).rejects.toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    // Not even the index caught up.
    expect(searchRows()).toEqual(before);
    expect(searchAtOnce("ferry").length).toBeGreaterThan(0);
    database.close();
  });
});

describe("search answered at once on other databases", () => {
  it("refuses a query that is not a string before touching a new database, both ways", async () => {
    const database = new Database(":memory:");
    const backend = sqliteBackend(database);
    expect(() => backend.searchMessagesSync?.(null as unknown as string, 10)).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    await expect(backend.searchMessages({} as unknown as string, 10)).rejects.toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    expect(database.prepare("SELECT count(*) AS n FROM sqlite_master").get()).toEqual({ n: 0 });
    database.close();
  });

  it("on a new database: no hits, and no table made (a read creates nothing; the first write does)", async () => {
    const database = new Database(":memory:");
    const backend = sqliteBackend(database);
    const tables = () =>
      database
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'assistant_%'")
        .all()
        .map((row) => (row as { name: string }).name);
    expect(backend.searchMessagesSync?.("anything at all", 10)).toEqual([]);
    expect(tables()).toEqual([]);
    await new SessionManager(backend).getSession("chat").appendMessage(say("m1", "user", "anything at all"));
    expect(tables()).toEqual(expect.arrayContaining(["assistant_messages", "assistant_fts"]));
    expect(backend.searchMessagesSync?.("anything at all", 10).map((hit) => hit.id)).toEqual(["m1"]);
    database.close();
  });

  it("on a database Cloudflare agents' Sessions API (agents@0.22.0) wrote: brought up to date and searched", async () => {
    temporary = openTemporaryDatabase();
    const agents = new AgentSessionProvider(agentsHost(temporary.database), "chat");
    agents.appendMessage(say("a1", "user", "the lighthouse keeper retired"));
    agents.appendMessage(say("a2", "assistant", "a solar beacon keeps the lamp lit now"));
    const backend = sqliteBackend(temporary.database);
    const hits = backend.searchMessagesSync?.("solar beacon", 10) ?? [];
    expect(hits.map((hit) => hit.id)).toEqual(["a2"]);
    // The async search of a new client on the same database agrees.
    expect(await sqliteBackend(temporary.database).searchMessages("solar beacon", 10)).toEqual(hits);
  });

  it("beside an async search of the same client under way: the same hits, each message indexed once", async () => {
    const database = new Database(":memory:");
    const backend = sqliteBackend(database, { newDatabaseLayout: "lean" });
    const manager = new SessionManager(backend);
    const { first } = await twoSessions(manager);
    const session = manager.getSession(first);
    for (let index = 0; index < 30; index++) {
      await session.appendMessage(
        say(`x${index}`, index % 2 === 0 ? "user" : "assistant", `ferry note ${index}`),
      );
    }
    // The async search starts its catch-up; the synchronous one runs before the async one's next step.
    const pending = backend.searchMessages("ferry note", 10);
    const atOnce = backend.searchMessagesSync?.("ferry note", 10);
    expect(await pending).toEqual(atOnce);
    const counts = database
      .prepare(
        `SELECT (SELECT count(*) FROM assistant_fts) AS rows, (SELECT count(DISTINCT id) FROM assistant_fts) AS ids,
          (SELECT count(*) FROM assistant_messages WHERE id <> 'f3') AS texts`,
      )
      .get() as { rows: number; ids: number; texts: number };
    expect(counts.rows).toBe(counts.ids);
    expect(counts.ids).toBe(counts.texts);
    database.close();
  });
});
