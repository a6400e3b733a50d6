import { MessageTree } from "@contextblocks/sessions/store-kit";
import { fromDurableObjectStorage, type StatementReport } from "@contextblocks/sql";
import { describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/index.js";
import { SESSION_SCHEMA_VERSION } from "../../src/session-schema.js";
import { ensureSessionSchema } from "../../src/store-kit.js";
import {
  type EarlierLayout,
  earlierLayouts,
  fixtureOverlayIds,
  fixtureOverlaySession,
  layoutsBeforeSessionKey,
  schemaShapeQuery,
  writeEarlierDatabase,
} from "../earlier-layouts.js";
import { ids, say } from "../mixed-writer.js";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

const shape = (state: DurableObjectState) =>
  state.storage.sql
    .exec(schemaShapeQuery)
    .toArray()
    .map((row) => row.entry);

/** The schema check a client makes when it first opens the database (a wake), with what it cost. */
async function wake(state: DurableObjectState) {
  const reports: StatementReport[] = [];
  const client = fromDurableObjectStorage(state.storage, { onStatement: (report) => reports.push(report) });
  const layout = await ensureSessionSchema(client);
  return {
    layout,
    statements: reports.length,
    rowsRead: reports.reduce((sum, report) => sum + (report.rowsRead ?? 0), 0),
    rowsWritten: reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0),
  };
}

describe("a database an earlier release wrote, opened by this release on a Durable Object", () => {
  it.each(earlierLayouts.map((fixture) => [fixture.name, fixture] as const))(
    "%s: brought to the schema of its layout on open, read and appended to",
    async (name, fixture: EarlierLayout) => {
      await inObject(`upgrade-${name}`, async (state) => {
        writeEarlierDatabase((statement, ...values) => state.storage.sql.exec(statement, ...values), fixture);
        const chat = sqliteTree(state.storage, "chat");
        expect(ids(await chat.getHistory())).toEqual(["u1", "a1", "u2"]);
        const marker = state.storage.sql
          .exec("SELECT version, layout FROM contextblocks_schema WHERE part = 'sessions'")
          .toArray();
        expect(marker).toEqual([{ version: SESSION_SCHEMA_VERSION, layout: fixture.layout }]);
        await chat.appendMessage(say("u3", "and its name again?"));
        expect(ids(await chat.getHistory())).toEqual(["u1", "a1", "u2", "u3"]);
        expect(ids(await chat.searchMessages("lighthouse", 5))).toContain("u1");
        expect(ids(await sqliteTree(state.storage, "other").getHistory())).toEqual(["o1"]);
        // Overlays stay in the order they were added; the newest is read alone; a new one comes after them.
        const shelf = new SqliteSessionStore(state.storage, fixtureOverlaySession);
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
      });
    },
  );

  it("a lean database's shape after the upgrade is a new lean database's", async () => {
    const lean = earlierLayouts.find((fixture) => fixture.layout === "lean") as EarlierLayout;
    const migrated = await inObject("upgrade-shape-old", async (state) => {
      writeEarlierDatabase((statement, ...values) => state.storage.sql.exec(statement, ...values), lean);
      await sqliteTree(state.storage, { sessionId: "chat" }).getHistory();
      return shape(state);
    });
    const created = await inObject("upgrade-shape-new", async (state) => {
      // Made by a first write (a read of a database without session tables creates nothing).
      await sqliteTree(state.storage, { sessionId: "chat", newDatabaseLayout: "lean" }).appendMessage(
        say("m1", "made by a write"),
      );
      return shape(state);
    });
    expect(migrated).toEqual(created);
  });

  it("reads of a new Durable Object find nothing and write no row; the first append makes the tables", async () => {
    await inObject("reads-write-nothing", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      const chat = new MessageTree(new SqliteSessionStore(client, "chat"));
      expect(await chat.getHistory()).toEqual([]);
      expect(await chat.getPathLength()).toBe(0);
      expect(await chat.searchMessages?.("anything", 10)).toEqual([]);
      expect(await chat.getCompactions()).toEqual([]);
      expect(reports.reduce((sum, report) => sum + (report.rowsWritten ?? 0), 0)).toBe(0);
      const tables = () =>
        state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name LIKE 'assistant_%'").toArray();
      expect(tables()).toEqual([]);
      await chat.appendMessage(say("m1", "anything at all"));
      expect(tables().length).toBeGreaterThan(0);
      expect(ids((await chat.searchMessages?.("anything", 10)) ?? [])).toEqual(["m1"]);
    });
  });

  it("a wake on an up-to-date database reads the schema marker only: one statement, one row", async () => {
    await inObject("upgrade-wake", async (state) => {
      const first = await wake(state);
      expect(first.layout).toBe("keyed");
      const again = await wake(state);
      console.log(JSON.stringify({ migration: first, wake: again }));
      expect(again).toEqual({ layout: "keyed", statements: 1, rowsRead: 1, rowsWritten: 0 });
    });
  });

  it.each(layoutsBeforeSessionKey.map((fixture) => [fixture.name, fixture] as const))(
    "%s: every search row and rowid kept, each with its session's token, each session searched apart",
    async (name, fixture: EarlierLayout) => {
      await inObject(`upgrade-session-key-${name}`, async (state) => {
        writeEarlierDatabase((statement, ...values) => state.storage.sql.exec(statement, ...values), fixture);
        const rows = () =>
          state.storage.sql
            .exec(
              `SELECT rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time,
                says_when FROM assistant_fts ORDER BY rowid`,
            )
            .toArray();
        const before = rows();
        const chat = sqliteTree(state.storage, "chat");
        const other = sqliteTree(state.storage, "other");
        expect(ids(await chat.searchMessages("lighthouse", 5))).toEqual(["u1"]);
        expect(rows()).toEqual(before);
        const tokens = state.storage.sql
          .exec("SELECT session_id, session_key FROM assistant_fts ORDER BY rowid")
          .toArray();
        const hex = (text: string) =>
          [...new TextEncoder().encode(text)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
        expect(tokens).toEqual(
          before.map((row) => ({
            session_id: row.session_id,
            session_key: row.session_id === null ? null : `s${hex(String(row.session_id)).toUpperCase()}z`,
          })),
        );
        expect(ids(await chat.searchMessages("marlowe cat", 5)).sort()).toEqual(["a1", "u1", "u2"]);
        expect(await chat.searchMessages("harbour", 5)).toEqual([]);
        expect(ids(await other.searchMessages("harbour", 5))).toEqual(["o1"]);
        expect(await other.searchMessages("lighthouse", 5)).toEqual([]);
        await other.appendMessage(say("o2", "another lighthouse"));
        expect(ids(await other.searchMessages("lighthouse", 5))).toEqual(["o2"]);
        expect(ids(await chat.searchMessages("lighthouse", 5))).toEqual(["u1"]);
      });
    },
  );
});
