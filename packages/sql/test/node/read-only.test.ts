import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { fromBetterSqlite3, sql } from "../../src/index.js";
import { isReadOnlyRefusal } from "../../src/store-kit.js";

let directory: string | undefined;
afterEach(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

/** What a write throws on a real database that only reads, through our client. */
async function refusal(database: Database.Database): Promise<unknown> {
  const client = fromBetterSqlite3(database);
  return client.run(sql`INSERT INTO entries (key) VALUES (${"b"})`).then(
    () => new Error("the write was taken"),
    (error: unknown) => error,
  );
}

describe("isReadOnlyRefusal", () => {
  it("knows SQLite opened read-only and a connection under query_only, also wrapped in a cause", async () => {
    directory = mkdtempSync(join(tmpdir(), "read-only-"));
    const path = join(directory, "db.sqlite");
    const writer = new Database(path);
    writer.exec("CREATE TABLE entries (key TEXT PRIMARY KEY)");
    writer.close();

    const readOnly = await refusal(new Database(path, { readonly: true }));
    expect(isReadOnlyRefusal(readOnly)).toBe(true);
    const queryOnly = new Database(path);
    queryOnly.pragma("query_only = ON");
    expect(isReadOnlyRefusal(await refusal(queryOnly))).toBe(true);
    expect(isReadOnlyRefusal(new Error("the store failed", { cause: readOnly }))).toBe(true);
    // A driver that carries only SQLite's message (node:sqlite's code is generic).
    expect(isReadOnlyRefusal(new Error("attempt to write a readonly database"))).toBe(true);
    // Postgres' read-only transaction (a hot standby): SQLSTATE 25006, as node-postgres and postgres.js carry it.
    expect(
      isReadOnlyRefusal(
        Object.assign(new Error("cannot execute UPDATE in a read-only transaction"), { code: "25006" }),
      ),
    ).toBe(true);
  });

  it("is false for every other failure", async () => {
    const database = new Database(":memory:");
    database.exec("CREATE TABLE entries (key TEXT PRIMARY KEY)");
    database.prepare("INSERT INTO entries (key) VALUES ('b')").run();
    const duplicate = await refusal(database);
    expect(duplicate).toMatchObject({ code: "SQLITE_CONSTRAINT_PRIMARYKEY" });
    expect(isReadOnlyRefusal(duplicate)).toBe(false);
    expect(isReadOnlyRefusal(Object.assign(new Error("relation does not exist"), { code: "42P01" }))).toBe(
      false,
    );
    expect(isReadOnlyRefusal("attempt to write a readonly database")).toBe(false);
    expect(isReadOnlyRefusal(undefined)).toBe(false);
  });
});
