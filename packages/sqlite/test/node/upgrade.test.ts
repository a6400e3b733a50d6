import { MessageTree } from "@contextblocks/sessions/store-kit";
import { fromBetterSqlite3 } from "@contextblocks/sql";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import type Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/index.js";
import { ensureSchema, SESSION_SCHEMA_VERSION } from "../../src/session-schema.js";
import {
  agentsSearchTable,
  type EarlierLayout,
  earlierLayouts,
  fixtureOverlayIds,
  fixtureOverlaySession,
  fixtureRows,
  schemaShapeQuery,
  searchColumnsQuery,
  writeEarlierDatabase,
} from "../earlier-layouts.js";
import { say } from "../mixed-writer.js";
import { sqliteTree } from "../sqlite-tree.js";

const opened: TemporaryDatabase[] = [];
afterEach(() => {
  for (const database of opened.splice(0)) database.remove();
});

function temporary(): TemporaryDatabase {
  const database = openTemporaryDatabase();
  opened.push(database);
  return database;
}

function earlier(fixture: EarlierLayout): TemporaryDatabase {
  const database = temporary();
  writeEarlierDatabase(
    (statement, ...values) => database.database.prepare(statement).run(...values),
    fixture,
  );
  return database;
}

const shape = (database: Database.Database) =>
  (database.prepare(schemaShapeQuery).all() as { entry: string }[]).map((row) => row.entry);
const marker = (database: Database.Database) =>
  database.prepare("SELECT version, layout FROM contextblocks_schema WHERE part = 'sessions'").get();
const ids = (messages: readonly { id: string }[]) => messages.map((message) => message.id);

/** A database of `layout` as today's code creates it: new for keyed and lean, agents' bare tables for indexed. */
async function reference(layout: EarlierLayout["layout"]): Promise<string[]> {
  const database = temporary().database;
  if (layout === "indexed") {
    const agents = earlierLayouts[0] as EarlierLayout;
    for (const statement of agents.ddl) database.prepare(statement).run();
  }
  // Made as a first write makes them (a read of a database without them creates nothing).
  await ensureSchema(fromBetterSqlite3(database), layout === "keyed" ? "keyed" : "lean");
  return shape(database);
}

describe.each(earlierLayouts.map((fixture) => [fixture.name, fixture] as const))(
  "a database %s, opened by this release",
  (_name, fixture) => {
    it("is brought to this release's schema of its layout, its messages read, searched and appended to", async () => {
      const { database } = earlier(fixture);
      const chat = sqliteTree(database, "chat");
      expect(ids(await chat.getHistory())).toEqual(["u1", "a1", "u2"]);
      expect(shape(database)).toEqual(await reference(fixture.layout));
      expect(marker(database)).toEqual({ version: SESSION_SCHEMA_VERSION, layout: fixture.layout });
      const searchColumns = (database.prepare(searchColumnsQuery).all() as { name: string }[]).map(
        (row) => row.name,
      );
      // agents' search table is kept as it is (searched by text alone); one of ours of an earlier shape is rebuilt.
      expect(searchColumns.includes("parent_row")).toBe(!agentsSearchTable(fixture));
      await chat.appendMessage(say("u3", "and its name again?"));
      expect(ids(await chat.getHistory())).toEqual(["u1", "a1", "u2", "u3"]);
      expect(await chat.getPathLength()).toBe(4);
      expect(ids(await chat.searchMessages("lighthouse", 5))).toContain("u1");
      expect(ids(await sqliteTree(database, "other").getHistory())).toEqual(["o1"]);
      // Overlays stay in the order they were added; the newest is read alone; a new one comes after them.
      const shelf = new SqliteSessionStore(database, fixtureOverlaySession);
      expect((await shelf.readOverlays()).map((overlay) => overlay.id)).toEqual([...fixtureOverlayIds]);
      expect((await shelf.readNewestOverlay())?.id).toBe("c-second");
      // The new overlay's range is stored first (a range off the session's paths is refused).
      for (const id of ["s1", "s2", "s3"])
        await new MessageTree(shelf).appendMessage(say(id, `shelved ${id}`));
      const added = await new MessageTree(shelf).addCompaction("summary c-third", "s1", "s3");
      expect((await shelf.readOverlays()).map((overlay) => overlay.id)).toEqual([
        ...fixtureOverlayIds,
        added.id,
      ]);
      expect(await new MessageTree(shelf).addCompaction("summary c-third", "s1", "s3")).toEqual(added);
      expect(await shelf.readOverlays()).toHaveLength(3);
      // An id is still one per database: another session's id is refused.
      await expect(sqliteTree(database, "other").appendMessage(say("u1", "taken"))).rejects.toThrow(/u1/);
    });

    it("is migrated once: opening it again, or running the migration again, changes nothing", async () => {
      const temporaryDatabase = earlier(fixture);
      await sqliteTree(temporaryDatabase.database, "chat").getHistory();
      const migrated = shape(temporaryDatabase.database);
      const { migrateSessionSchema } = await import("../../src/session-migration.js");
      const reopened = temporaryDatabase.reopen();
      const { fromBetterSqlite3 } = await import("@contextblocks/sql");
      expect(await migrateSessionSchema(fromBetterSqlite3(reopened))).toBe(fixture.layout);
      expect(shape(reopened)).toEqual(migrated);
      expect(ids(await sqliteTree(reopened, "chat").getHistory())).toEqual(["u1", "a1", "u2"]);
    });

    it("two writers opening it at once both open it, and it is migrated whole", async () => {
      const temporaryDatabase = earlier(fixture);
      const writers = [temporaryDatabase.database, temporaryDatabase.connect(), temporaryDatabase.connect()];
      for (const writer of writers) writer.pragma("busy_timeout = 10000");
      const histories = await Promise.all(
        writers.map((writer, index) =>
          sqliteTree(writer, index === 0 ? "chat" : "other")
            .getHistory()
            .then(ids),
        ),
      );
      expect(histories).toEqual([["u1", "a1", "u2"], ["o1"], ["o1"]]);
      expect(shape(temporaryDatabase.database)).toEqual(await reference(fixture.layout));
      await sqliteTree(writers[1] as Database.Database, "chat").appendMessage(say("u3", "after the race"));
      expect(ids(await sqliteTree(writers[2] as Database.Database, "chat").getHistory())).toEqual([
        "u1",
        "a1",
        "u2",
        "u3",
      ]);
    });
  },
);

describe("the fixtures", () => {
  it("hold every earlier layout and the rows they claim", () => {
    expect(new Set(earlierLayouts.map((fixture) => fixture.layout))).toEqual(
      new Set(["keyed", "lean", "indexed"]),
    );
    for (const fixture of earlierLayouts) {
      const { database } = earlier(fixture);
      const count = database.prepare("SELECT COUNT(*) AS count FROM assistant_messages").get() as {
        count: number;
      };
      expect(count.count).toBe(fixtureRows.length);
      // Written before any marker existed, or with an older one.
      const markers = database
        .prepare("SELECT name FROM sqlite_master WHERE name = 'contextblocks_schema'")
        .all();
      if (markers.length > 0)
        expect(Number((marker(database) as { version: number }).version)).toBeLessThan(
          SESSION_SCHEMA_VERSION,
        );
    }
  });
});
