import { fromBetterSqlite3 } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrateSessionSchema } from "../../src/session-migration.js";
import { earlierLayouts, writeEarlierDatabase } from "../earlier-layouts.js";
import { sqliteTree } from "../sqlite-tree.js";

/** Statements that change the schema: what the migration runs and opening a current database must not. */
const schemaChange = /^\s*(CREATE|ALTER|DROP)\b/i;

describe("the migration", () => {
  it("runs only when the schema marker is missing or older, never to open a current database", async () => {
    const current = new Database(":memory:");
    await migrateSessionSchema(fromBetterSqlite3(current), "lean");
    const seen: string[] = [];
    const counted = (database: Database.Database) =>
      fromBetterSqlite3(database, { onStatement: ({ text }) => seen.push(text) });
    const store = sqliteTree(counted(current), "chat");
    await store.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] });
    expect(await store.getPathLength()).toBe(1);
    expect(seen.filter((text) => schemaChange.test(text))).toEqual([]);
    const old = new Database(":memory:");
    writeEarlierDatabase((statement, ...values) => old.prepare(statement).run(...values), earlierLayouts[0]!);
    seen.length = 0;
    expect(await sqliteTree(counted(old), "chat").getPathLength()).toBe(3);
    expect(seen.filter((text) => schemaChange.test(text)).length).toBeGreaterThan(0);
    current.close();
    old.close();
  });
});
