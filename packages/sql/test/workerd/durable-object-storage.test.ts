import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fromDurableObjectStorage, type StatementReport, sql } from "../../src/index.js";

const HOSTILE = [
  'it\'s "quoted"',
  "'; DROP TABLE notes; --",
  "nul\u0000inside",
  "unicode ✓ 中文 русский 🙂 \u{1F9D1}\u200D\u{1F4BB}",
  "x".repeat(1024 * 1024),
];

/** Run `callback` inside a fresh Durable Object with SQLite storage. */
function inObject<R>(name: string, callback: (state: DurableObjectState) => R | Promise<R>): Promise<R> {
  return runInDurableObject(env.SQL_OBJECT.getByName(name), (_instance, state) => callback(state));
}

describe("fromDurableObjectStorage", () => {
  it("round-trips rows through query and run", async () => {
    await inObject("round-trip", async (state) => {
      const client = fromDurableObjectStorage(state.storage);
      expect(client.dialect).toBe("sqlite");
      expect(client.atomic).toBe(true);
      // Cloudflare bills each row read.
      expect(client.billsRows).toBe(true);
      expect(await client.query`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`).toEqual([]);
      await client.run(sql`INSERT INTO notes (body) VALUES (${"first"}), (${"second"})`);
      expect(await client.query`SELECT id, body FROM notes ORDER BY id`).toEqual([
        { id: 1, body: "first" },
        { id: 2, body: "second" },
      ]);
    });
  });

  it("binds hostile strings as values, byte for byte, and the table survives", async () => {
    await inObject("hostile", async (state) => {
      const client = fromDurableObjectStorage(state.storage);
      await client.query`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`;
      for (const body of HOSTILE) await client.query`INSERT INTO notes (body) VALUES (${body})`;
      const rows = await client.query<{ body: string }>`SELECT body FROM notes ORDER BY id`;
      expect(rows.map((row) => row.body)).toEqual(HOSTILE);
    });
  });

  it("binds booleans as 1/0 (the runtime would store the text 'true'), bigints and bytes", async () => {
    await inObject("values", async (state) => {
      const client = fromDurableObjectStorage(state.storage);
      await client.query`CREATE TABLE v (a, b, c, d)`;
      await client.query`INSERT INTO v VALUES (${true}, ${false}, ${2n ** 40n}, ${new Uint8Array([1, 2, 3]).subarray(1)})`;
      const [row] = await client.query`SELECT a, b, typeof(a) AS ta, c, typeof(c) AS tc, hex(d) AS d FROM v`;
      // The runtime binds every JS number as REAL; what matters is that a boolean is a number, not "true".
      expect(row).toEqual({ a: 1, b: 0, ta: "real", c: 2 ** 40, tc: "real", d: "0203" });
      await expect(client.query`SELECT ${2n ** 60n}`).rejects.toThrow(RangeError);
    });
  });

  it("batch runs in transactionSync: a failing statement leaves nothing applied", async () => {
    await inObject("atomic", async (state) => {
      const client = fromDurableObjectStorage(state.storage);
      await client.query`CREATE TABLE notes (body TEXT NOT NULL)`;
      await expect(
        client.batch([
          sql`INSERT INTO notes VALUES (${"first"})`,
          sql`INSERT INTO notes VALUES (${"second"})`,
          sql`INSERT INTO notes VALUES (${null})`,
        ]),
      ).rejects.toThrow(/NOT NULL/);
      expect(await client.query`SELECT * FROM notes`).toEqual([]);
      const results = await client.batch([
        sql`INSERT INTO notes VALUES (${"a"})`,
        sql`SELECT body FROM notes`,
      ]);
      expect(results).toEqual([[], [{ body: "a" }]]);
      // The same group at once (batchSync), inside transactionSync too.
      expect(() =>
        client.batchSync?.([sql`INSERT INTO notes VALUES (${"b"})`, sql`INSERT INTO notes VALUES (${null})`]),
      ).toThrow(/NOT NULL/);
      expect(
        client.batchSync?.([sql`INSERT INTO notes VALUES (${"c"})`, sql`SELECT body FROM notes`]),
      ).toEqual([[], [{ body: "a" }, { body: "c" }]]);
    });
  });

  it("reports rows read and written per statement, as the cursor counts them", async () => {
    await inObject("reports", async (state) => {
      const reports: StatementReport[] = [];
      const client = fromDurableObjectStorage(state.storage, {
        onStatement: (report) => reports.push(report),
      });
      await client.query`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`;
      reports.length = 0;
      await client.query`INSERT INTO notes (body) VALUES (${"a"}), (${"b"}), (${"c"})`;
      await client.query`SELECT body FROM notes`;
      await client.query`SELECT body FROM notes WHERE id = ${2}`;
      expect(reports).toEqual([
        { text: "INSERT INTO notes (body) VALUES (?), (?), (?)", rowsRead: 0, rowsWritten: 3 },
        { text: "SELECT body FROM notes", rowsRead: 3, rowsWritten: 0 },
        { text: "SELECT body FROM notes WHERE id = ?", rowsRead: 1, rowsWritten: 0 },
      ]);
    });
  });

  it("rejects on SQL errors, naming the problem", async () => {
    await inObject("errors", async (state) => {
      const client = fromDurableObjectStorage(state.storage);
      await expect(client.query`SELECT * FROM missing_table`).rejects.toThrow(/no such table: missing_table/);
    });
  });

  it("persists: a later call into the same object sees the rows", async () => {
    await inObject("persist", (state) =>
      fromDurableObjectStorage(state.storage).batch([
        sql`CREATE TABLE t (v)`,
        sql`INSERT INTO t VALUES (${"kept"})`,
      ]),
    );
    const rows = await inObject(
      "persist",
      (state) => fromDurableObjectStorage(state.storage).query`SELECT v FROM t`,
    );
    expect(rows).toEqual([{ v: "kept" }]);
  });
});
