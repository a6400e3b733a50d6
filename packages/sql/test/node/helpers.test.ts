import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { fromBetterSqlite3, sql } from "../../src/index.js";
import { isMissingTableError, join, raw, statementText } from "../../src/store-kit.js";

describe("raw and join", () => {
  it("splice package-written text and bind every joined value", async () => {
    const keys = ["a", "b'); DROP TABLE t; --", "c"];
    const statement = sql`SELECT key FROM ${raw("entries")} WHERE key IN (${join(keys)}) ORDER BY key`;
    expect(statementText(statement, "sqlite")).toBe(
      "SELECT key FROM entries WHERE key IN (?, ?, ?) ORDER BY key",
    );
    expect(statement.values).toEqual(keys);
    const database = new Database(":memory:");
    database.exec("CREATE TABLE entries (key TEXT)");
    database.prepare("INSERT INTO entries VALUES (?), (?)").run("a", keys[1]);
    const client = fromBetterSqlite3(database);
    expect(await client.run(statement)).toEqual([{ key: "a" }, { key: keys[1] }]);
  });

  it("joins statements with a separator, and an empty list to NULL", () => {
    const joined = join([sql`a = ${1}`, sql`b = ${2}`], " AND ");
    expect(statementText(joined, "postgres")).toBe("a = $1 AND b = $2");
    expect(statementText(sql`x IN (${join([])})`, "sqlite")).toBe("x IN (NULL)");
  });
});

describe("isMissingTableError", () => {
  it("reads SQLite's message, through a cause chain, for one table when asked", () => {
    const database = new Database(":memory:");
    let error: unknown;
    try {
      database.prepare("SELECT * FROM cf_agents_context_blocks").all();
    } catch (caught) {
      error = caught;
    }
    expect(isMissingTableError(error)).toBe(true);
    expect(isMissingTableError(error, "cf_agents_context_blocks")).toBe(true);
    expect(isMissingTableError(error, "cf_agents")).toBe(false);
    expect(isMissingTableError(new Error("wrapped", { cause: error }), "cf_agents_context_blocks")).toBe(
      true,
    );
    expect(isMissingTableError(new Error("no such table: main.t: SQLITE_ERROR"), "t")).toBe(true);
    expect(isMissingTableError(new Error("database is locked"))).toBe(false);
  });
});
