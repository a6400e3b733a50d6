import { SessionManager } from "@contextblocks/sessions";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { AgentSessionProvider } from "agents-session/experimental/memory/session";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../src/index.js";

// A search reads: on a database opened read-only (a replica, a dashboard's handle) it answers from the index as
// it stands instead of failing on the catch-up it would otherwise write first.

let temporary: TemporaryDatabase | undefined;
const opened: Database.Database[] = [];
afterEach(() => {
  for (const database of opened.splice(0)) database.close();
  temporary?.remove();
  temporary = undefined;
});

const say = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

/** A session whose last appends the index has not caught up with yet (the lean layout indexes every 8). */
async function lagging(): Promise<string> {
  temporary = openTemporaryDatabase();
  const manager = new SessionManager(sqliteBackend(temporary.database, { newDatabaseLayout: "lean" }));
  const { id } = await manager.create("tides");
  const session = manager.getSession(id);
  for (let index = 0; index < 6; index++)
    await session.appendMessage(say(`m${index}`, `the tide turns ${index}`));
  expect(await session.search("tide")).toHaveLength(6);
  for (let index = 6; index < 9; index++)
    await session.appendMessage(say(`m${index}`, `harbour tide ${index}`));
  return id;
}

function readOnly(): Database.Database {
  const database = new Database((temporary as TemporaryDatabase).path, { readonly: true });
  opened.push(database);
  return database;
}

describe("a search on a database that only reads", () => {
  it("finds what the index holds, awaited and at once, in a session and across sessions", async () => {
    const id = await lagging();
    const manager = new SessionManager(sqliteBackend(readOnly()));
    const indexed = ["m0", "m1", "m2", "m3", "m4", "m5"];
    const ids = (hits: readonly { id: string }[]) => hits.map((hit) => hit.id).sort();
    expect(ids(await manager.getSession(id).search("tide"))).toEqual(indexed);
    expect(ids(await manager.search("tide"))).toEqual(indexed);
    expect(ids(manager.synchronous?.search?.("tide") ?? [])).toEqual(indexed);
    // Every message is still read; only the index waits.
    expect(await manager.getSession(id).getHistory()).toHaveLength(9);
  });

  it("under PRAGMA query_only too, and a writer's next search indexes the rest", async () => {
    const id = await lagging();
    const database = (temporary as TemporaryDatabase).connect();
    database.pragma("query_only = ON");
    const session = new SessionManager(sqliteBackend(database)).getSession(id);
    expect(await session.search("harbour")).toEqual([]);

    database.pragma("query_only = OFF");
    expect((await session.search("harbour")).map((hit) => hit.id).sort()).toEqual(["m6", "m7", "m8"]);
  });

  it("still fails on any other refusal", async () => {
    const id = await lagging();
    const database = (temporary as TemporaryDatabase).connect();
    // Another connection holds the write lock and this one does not wait: the catch-up's write is refused busy.
    database.pragma("busy_timeout = 0");
    const holder = (temporary as TemporaryDatabase).connect();
    holder.exec("BEGIN IMMEDIATE");
    try {
      await expect(
        new SessionManager(sqliteBackend(database)).getSession(id).search("tide"),
      ).rejects.toMatchObject({
        code: "SQLITE_BUSY",
      });
    } finally {
      holder.exec("ROLLBACK");
    }
  });
});

describe("a lean database Cloudflare agents' Sessions API (agents@0.22.0) opened since", () => {
  it("is read as indexed, read-only or not, and a read writes nothing (not even the marker)", async () => {
    temporary = openTemporaryDatabase();
    const writer = new SessionManager(sqliteBackend(temporary.database, { newDatabaseLayout: "lean" }));
    for (let index = 0; index < 3; index++)
      await writer.getSession("chat").appendMessage(say(`m${index}`, `harbour ${index}`));
    expect(await writer.getSession("chat").search("harbour")).toHaveLength(3);
    // agents@0.22.0 opening the database adds its parent index: the lean rules no longer hold.
    new AgentSessionProvider(agentsHost((temporary as TemporaryDatabase).connect()), "chat").getHistory();
    const marker = () =>
      (temporary as TemporaryDatabase).database.prepare("SELECT * FROM contextblocks_schema").all();
    const before = marker();
    for (const database of [readOnly(), (temporary as TemporaryDatabase).connect()]) {
      const session = new SessionManager(sqliteBackend(database)).getSession("chat");
      expect((await session.search("harbour")).map((hit) => hit.id).sort()).toEqual(["m0", "m1", "m2"]);
      expect((await session.getHistory()).map((message) => message.id)).toEqual(["m0", "m1", "m2"]);
      expect(marker()).toEqual(before);
    }
  });
});

describe("an indexed database agents@0.22.0 appended to since this release last read it", () => {
  it("reads the path on a read-only handle (the latest-leaf pointer is a cache a reader does not write)", async () => {
    temporary = openTemporaryDatabase();
    const agents = new AgentSessionProvider(agentsHost(temporary.database), "chat");
    agents.appendMessage(say("a1", "the tide turns"));
    const writer = new SessionManager(sqliteBackend(temporary.database)).getSession("chat");
    expect((await writer.getHistory()).map((message) => message.id)).toEqual(["a1"]);
    agents.appendMessage(say("a2", "the harbour fills"));
    const reader = new SessionManager(sqliteBackend(readOnly())).getSession("chat");
    expect((await reader.getHistory()).map((message) => message.id)).toEqual(["a1", "a2"]);
    expect((await reader.search("harbour")).map((hit) => hit.id)).toEqual(["a2"]);
  });
});

describe("a database without this release's session tables", () => {
  const refusal = {
    code: "READONLY",
    message: expect.stringContaining(
      "this database only reads, and its session tables must first be created",
    ),
    cause: expect.objectContaining({ code: "SQLITE_READONLY" }),
  };

  it("has none yet: a read finds nothing and creates nothing, read-only or not", async () => {
    temporary = openTemporaryDatabase();
    temporary.database.exec("CREATE TABLE unrelated (x)");
    const tables = () =>
      (temporary as TemporaryDatabase).database
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all();
    for (const database of [readOnly(), temporary.database]) {
      const manager = new SessionManager(sqliteBackend(database));
      const session = manager.getSession("chat");
      expect(await session.getHistory()).toEqual([]);
      expect((await session.getRecentHistory(10_000)).messages).toEqual([]);
      expect(await session.getCompactions()).toEqual([]);
      expect(await session.estimateTokens()).toBeGreaterThanOrEqual(0);
      expect(await session.search("tide")).toEqual([]);
      expect(await manager.search("tide")).toEqual([]);
      expect(manager.synchronous?.search?.("tide")).toEqual([]);
      // Bad input is refused as it is where the tables are.
      await expect(session.search(42 as never)).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(manager.search("tide", { limit: 0 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(tables()).toEqual([{ name: "unrelated" }]);
    }
    // The first write creates them.
    await new SessionManager(sqliteBackend(temporary.database))
      .getSession("chat")
      .appendMessage(say("m1", "the tide"));
    expect(tables().length).toBeGreaterThan(1);
  });

  it("was written by agents@0.22.0: refused by name until a writer brings it to this release's tables", async () => {
    temporary = openTemporaryDatabase();
    const agents = new AgentSessionProvider(agentsHost(temporary.database), "chat");
    agents.appendMessage(say("a1", "the tide turns"));
    const reader = readOnly();
    await expect(
      new SessionManager(sqliteBackend(reader)).getSession("chat").search("tide"),
    ).rejects.toMatchObject(refusal);
    expect(
      (await new SessionManager(sqliteBackend(temporary.database)).getSession("chat").search("tide")).length,
    ).toBe(1);
    expect(
      (await new SessionManager(sqliteBackend(reader)).getSession("chat").search("tide")).map(
        (hit) => hit.id,
      ),
    ).toEqual(["a1"]);
  });
});
