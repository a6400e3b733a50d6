import { fromBetterSqlite3 } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { describe, expect, it, vi } from "vitest";
import { earlierLayouts, writeEarlierDatabase } from "../earlier-layouts.js";
import { sqliteTree } from "../sqlite-tree.js";

describe("the migration module", () => {
  it("is loaded only when the schema marker is missing or older, never to open a current database", async () => {
    // A current database, made by the migration itself imported directly (not through the store).
    const { migrateSessionSchema } = await vi.importActual<typeof import("../../src/session-migration.js")>(
      "../../src/session-migration.js",
    );
    const current = new Database(":memory:");
    await migrateSessionSchema(fromBetterSqlite3(current), "lean");
    let loads = 0;
    vi.doMock("../../src/session-migration.js", async () => {
      loads++;
      return vi.importActual("../../src/session-migration.js");
    });
    const store = sqliteTree(current, "chat");
    await store.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] });
    expect(await store.getPathLength()).toBe(1);
    expect(loads).toBe(0);
    const old = new Database(":memory:");
    writeEarlierDatabase((statement, ...values) => old.prepare(statement).run(...values), earlierLayouts[0]!);
    expect(await sqliteTree(old, "chat").getPathLength()).toBe(3);
    expect(loads).toBe(1);
    current.close();
    old.close();
  });
});
