import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fromBetterSqlite3, type StatementReport, sql } from "../../src/index.js";

const HOSTILE = [
  'it\'s "quoted"',
  "'; DROP TABLE notes; --",
  "nul\u0000inside",
  "unicode ✓ 中文 русский 🙂 \u{1F9D1}\u200D\u{1F4BB}",
  "x".repeat(1024 * 1024),
];

describe("fromBetterSqlite3", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  it("round-trips rows through query and run", async () => {
    const client = fromBetterSqlite3(temporary.database);
    expect(client.dialect).toBe("sqlite");
    expect(client.atomic).toBe(true);
    // Rows read cost only time here: providers may pick their faster statements.
    expect(client.billsRows).toBe(false);
    expect(await client.query`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`).toEqual([]);
    expect(await client.run(sql`INSERT INTO notes (body) VALUES (${"first"})`)).toEqual([]);
    await client.query`INSERT INTO notes (body) VALUES (${"second"})`;
    const rows = await client.query<{ id: number; body: string }>`SELECT id, body FROM notes ORDER BY id`;
    expect(rows).toEqual([
      { id: 1, body: "first" },
      { id: 2, body: "second" },
    ]);
    // A write with RETURNING is a reader: its rows come back.
    expect(await client.query`INSERT INTO notes (body) VALUES (${"third"}) RETURNING id`).toEqual([
      { id: 3 },
    ]);
  });

  it("binds hostile strings as values, byte for byte, and the table survives", async () => {
    const client = fromBetterSqlite3(temporary.database);
    await client.query`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`;
    for (const body of HOSTILE) await client.query`INSERT INTO notes (body) VALUES (${body})`;
    const rows = await client.query<{ body: string }>`SELECT body FROM notes ORDER BY id`;
    expect(rows.map((row) => row.body)).toEqual(HOSTILE);
    const [{ count } = { count: -1 }] = await client.query<{
      count: number;
    }>`SELECT count(*) AS count FROM notes`;
    expect(count).toBe(HOSTILE.length);
  });

  it("binds booleans as 1/0, bigints and bytes", async () => {
    const client = fromBetterSqlite3(temporary.database);
    await client.query`CREATE TABLE v (a, b, c, d)`;
    await client.query`INSERT INTO v VALUES (${true}, ${false}, ${9007199254740993n}, ${new Uint8Array([1, 2, 3])})`;
    const [row] = await client.query<
      Record<string, unknown>
    >`SELECT a, b, typeof(c) AS tc, c = 9007199254740993 AS exact, hex(d) AS d FROM v`;
    expect(row).toEqual({ a: 1, b: 0, tc: "integer", exact: 1, d: "010203" });
  });

  it("batch is all-or-nothing: a failing statement leaves nothing applied", async () => {
    const client = fromBetterSqlite3(temporary.database);
    await client.query`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`;
    await expect(
      client.batch([
        sql`INSERT INTO notes (body) VALUES (${"kept?"})`,
        sql`INSERT INTO notes (body) VALUES (${"also?"})`,
        sql`INSERT INTO notes (body) VALUES (${null})`, // NOT NULL constraint
      ]),
    ).rejects.toThrow(/NOT NULL/);
    expect(await client.query`SELECT * FROM notes`).toEqual([]);
  });

  it("batch resolves to each statement's rows, in order", async () => {
    const client = fromBetterSqlite3(temporary.database);
    const results = await client.batch([
      sql`CREATE TABLE notes (body TEXT)`,
      sql`INSERT INTO notes VALUES (${"a"}), (${"b"})`,
      sql`SELECT body FROM notes ORDER BY body`,
    ]);
    expect(results).toEqual([[], [], [{ body: "a" }, { body: "b" }]]);
    expect(await client.batch([])).toEqual([]);
  });

  it("batchSync answers at once, all or nothing", () => {
    const client = fromBetterSqlite3(temporary.database);
    const batchSync = client.batchSync;
    if (batchSync === undefined) throw new Error("expected batchSync on better-sqlite3");
    expect(
      batchSync([sql`CREATE TABLE notes (body TEXT NOT NULL)`, sql`INSERT INTO notes VALUES (${"a"})`]),
    ).toEqual([[], []]);
    expect(() =>
      batchSync([sql`INSERT INTO notes VALUES (${"b"})`, sql`INSERT INTO notes VALUES (${null})`]),
    ).toThrow(/NOT NULL/);
    expect(client.runSync?.(sql`SELECT body FROM notes`)).toEqual([{ body: "a" }]);
    expect(batchSync([])).toEqual([]);
  });

  it("prepares each statement text once", async () => {
    const prepare = vi.spyOn(temporary.database, "prepare");
    const client = fromBetterSqlite3(temporary.database);
    await client.query`CREATE TABLE notes (body TEXT)`;
    for (const body of ["a", "b", "c"]) await client.query`INSERT INTO notes VALUES (${body})`;
    const texts = prepare.mock.calls.map(([text]) => text);
    expect(texts.filter((text) => text === "INSERT INTO notes VALUES (?)")).toHaveLength(1);
  });

  it("drops the least recently used statement past the cache size", async () => {
    const prepare = vi.spyOn(temporary.database, "prepare");
    const client = fromBetterSqlite3(temporary.database, { statementCacheSize: 1 });
    await client.query`SELECT 1`;
    await client.query`SELECT 2`;
    await client.query`SELECT 1`;
    expect(prepare.mock.calls.map(([text]) => text)).toEqual(["SELECT 1", "SELECT 2", "SELECT 1"]);
  });

  it("reports each statement, with changes for writes", async () => {
    const reports: StatementReport[] = [];
    const client = fromBetterSqlite3(temporary.database, { onStatement: (report) => reports.push(report) });
    await client.query`CREATE TABLE notes (body TEXT)`;
    await client.query`INSERT INTO notes VALUES (${"a"}), (${"b"})`;
    await client.query`SELECT * FROM notes`;
    expect(reports).toEqual([
      { text: "CREATE TABLE notes (body TEXT)", changes: 0 },
      { text: "INSERT INTO notes VALUES (?), (?)", changes: 2 },
      { text: "SELECT * FROM notes" },
    ]);
  });

  it("rejects (does not throw synchronously) on SQL errors", async () => {
    const client = fromBetterSqlite3(temporary.database);
    const pending = client.query`SELECT * FROM missing_table`;
    await expect(pending).rejects.toThrow(/no such table: missing_table/);
  });

  it("persists to the file: a reopened database sees the rows", async () => {
    await fromBetterSqlite3(temporary.database).batch([
      sql`CREATE TABLE notes (body TEXT)`,
      sql`INSERT INTO notes VALUES (${"durable"})`,
    ]);
    const reopened = fromBetterSqlite3(temporary.reopen());
    expect(await reopened.query`SELECT body FROM notes`).toEqual([{ body: "durable" }]);
  });
});
