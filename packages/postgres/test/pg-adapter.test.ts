import { fromPg, fromPostgresJs, type StatementReport, sql, toSqlClient } from "@contextblocks/sql";
import { isPgClient, isPgPool, isPostgresJs, type PostgresJsSql } from "@contextblocks/sql/store-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";

// The `fromPg` and `fromPostgresJs` adapters of @contextblocks/sql, against the throwaway server. (It is tested here because this
// package owns the server; sql itself stays free of any Postgres dependency.)

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

describe("fromPg", () => {
  it("binds every value type as a $n parameter and reads it back", async () => {
    const reports: StatementReport[] = [];
    const client = fromPg(await schema.client(), { onStatement: (report) => reports.push(report) });
    expect(client.dialect).toBe("postgres");
    const bytes = new Uint8Array([0, 1, 2, 255]);
    const [row] = await client.query<
      Record<string, unknown>
    >`SELECT ${"it's"}::text AS text, ${42.5}::float8 AS number,
      ${9_007_199_254_740_993n}::int8 AS big, ${true}::boolean AS yes, ${null}::text AS nothing, ${bytes}::bytea AS bytes`;
    expect(row).toEqual({
      text: "it's",
      number: 42.5,
      big: "9007199254740993",
      yes: true,
      nothing: null,
      bytes: Buffer.from(bytes),
    });
    expect(reports[0]?.text).toContain("$1::text AS text");
    expect(reports[0]?.text).toContain("$6::bytea");
  });

  it("never splices a value into the SQL text", async () => {
    const client = fromPg(await schema.client());
    await client.query`CREATE TABLE notes (body TEXT)`;
    const hostile = "'); DROP TABLE notes; --";
    await client.query`INSERT INTO notes VALUES (${hostile})`;
    expect(await client.query`SELECT body FROM notes`).toEqual([{ body: hostile }]);
  });

  it("reports rowCount as changes for writes", async () => {
    const reports: StatementReport[] = [];
    const client = fromPg(await schema.client(), { onStatement: (report) => reports.push(report) });
    await client.query`CREATE TABLE notes (body TEXT)`;
    await client.query`INSERT INTO notes VALUES ('a'), ('b'), ('c')`;
    await client.query`UPDATE notes SET body = 'z' WHERE body <> 'a'`;
    await client.query`SELECT * FROM notes`;
    expect(reports.map((report) => report.changes)).toEqual([undefined, 3, 2, undefined]);
  });

  for (const kind of ["Client", "Pool"] as const) {
    it(`batch on a ${kind} is all or nothing`, async () => {
      const source = kind === "Pool" ? schema.pool(2) : await schema.client();
      const client = fromPg(source);
      await client.query`CREATE TABLE notes (body TEXT PRIMARY KEY)`;
      const results = await client.batch([
        sql`INSERT INTO notes VALUES (${"one"})`,
        sql`SELECT count(*)::int AS n FROM notes`,
      ]);
      expect(results).toEqual([[], [{ n: 1 }]]);
      await expect(
        client.batch([sql`INSERT INTO notes VALUES (${"two"})`, sql`INSERT INTO notes VALUES (${"one"})`]),
      ).rejects.toThrow(/duplicate key/);
      expect(await client.query`SELECT body FROM notes ORDER BY body`).toEqual([{ body: "one" }]);
      // The connection is usable afterwards (the transaction was rolled back, not left open).
      await client.query`INSERT INTO notes VALUES (${"three"})`;
      expect(await client.query`SELECT count(*)::int AS n FROM notes`).toEqual([{ n: 2 }]);
    });
  }

  it("a Pool transaction runs on one checked-out client and gives it back", async () => {
    const pool = schema.pool(1);
    const client = fromPg(pool);
    await client.query`CREATE TABLE notes (body TEXT PRIMARY KEY)`;
    // With one connection in the pool, BEGIN and the inserts must share it or the batch would deadlock.
    const [, , backends] = await client.batch([
      sql`INSERT INTO notes VALUES ('a')`,
      sql`INSERT INTO notes VALUES ('b')`,
      sql`SELECT pg_backend_pid() AS pid`,
    ]);
    expect(backends).toHaveLength(1);
    await expect(client.batch([sql`INSERT INTO notes VALUES ('c')`, sql`SELECT 1/0`])).rejects.toThrow(
      /division by zero/,
    );
    expect(pool.idleCount).toBe(1);
    expect(await client.query`SELECT count(*)::int AS n FROM notes`).toEqual([{ n: 2 }]);
  });

  it("a Pool connection dropped during a batch fails that batch, and the process goes on", async () => {
    const pool = schema.pool(2);
    pool.on("error", () => undefined);
    const client = fromPg(pool);
    const admin = await schema.client();
    const running = client.batch([sql`SELECT 1 AS one`, sql`SELECT pg_sleep(30) AS slept`]);
    // Its outcome is taken at once: the batch may fail while the loop below still awaits, and a rejection
    // nobody listens to yet is reported as unhandled (and fails the run) even though it is awaited later.
    const outcome = running.then(
      () => null,
      (error: unknown) => error,
    );
    // Terminate the batch's backend from another connection once it sleeps.
    let killed = 0;
    for (let attempt = 0; attempt < 200 && killed === 0; attempt++) {
      const { rows } = await admin.query(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
         WHERE query LIKE 'SELECT pg_sleep(%' AND pid <> pg_backend_pid()`,
      );
      killed = rows.length;
      if (killed === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(killed).toBe(1);
    expect(await outcome).toBeInstanceOf(Error);
    // Let the dropped connection's events arrive: an unhandled 'error' would fail the run here.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await client.query`SELECT 2 AS two`).toEqual([{ two: 2 }]);
  });

  it("on one Client, a statement sent during a batch neither lands inside it nor interleaves", async () => {
    const connection = await schema.client();
    const first = fromPg(connection);
    const second = fromPg(connection); // another adapter on the same Client shares its queue
    await first.query`CREATE TABLE notes (body TEXT PRIMARY KEY)`;
    const failing = first.batch([
      sql`INSERT INTO notes VALUES ('inside')`,
      sql`SELECT pg_sleep(0.05)`,
      sql`INSERT INTO notes VALUES ('inside')`,
    ]);
    const outside = second.query`INSERT INTO notes VALUES ('outside')`;
    await expect(failing).rejects.toThrow(/duplicate key/);
    await outside;
    expect(await first.query`SELECT body FROM notes`).toEqual([{ body: "outside" }]);
  });

  it("toSqlClient tells a pg Client and Pool apart by shape", async () => {
    const connection = await schema.client();
    const pool = schema.pool(1);
    expect(isPgClient(connection)).toBe(true);
    expect(isPgPool(connection)).toBe(false);
    expect(isPgPool(pool)).toBe(true);
    expect(isPgClient(pool)).toBe(false);
    expect(toSqlClient(connection).dialect).toBe("postgres");
    expect(toSqlClient(pool).dialect).toBe("postgres");
    expect(await toSqlClient(pool).query`SELECT 1 AS one`).toEqual([{ one: 1 }]);
  });
});

describe("fromPostgresJs (porsager)", () => {
  it("binds values, runs atomic batches and is what toSqlClient picks", async () => {
    const instance = schema.postgresJs(2);
    expect(isPostgresJs(instance)).toBe(true);
    expect(isPgClient(instance)).toBe(false);
    const reports: StatementReport[] = [];
    const client = fromPostgresJs(instance as unknown as PostgresJsSql, {
      onStatement: (report) => reports.push(report),
    });
    expect(toSqlClient(instance as unknown as PostgresJsSql).dialect).toBe("postgres");
    const bytes = new Uint8Array([0, 1, 255]);
    const [row] = await client.query<Record<string, unknown>>`SELECT ${"it's"}::text AS text,
      ${9_007_199_254_740_993n}::int8 AS big, ${true}::boolean AS yes, ${bytes}::bytea AS bytes`;
    expect(row?.text).toBe("it's");
    expect(String(row?.big)).toBe("9007199254740993");
    expect(row?.yes).toBe(true);
    expect(new Uint8Array(row?.bytes as Uint8Array)).toEqual(bytes);
    await client.query`CREATE TABLE notes (body TEXT PRIMARY KEY)`;
    await client.batch([sql`INSERT INTO notes VALUES ('a')`, sql`INSERT INTO notes VALUES ('b')`]);
    await expect(
      client.batch([sql`INSERT INTO notes VALUES ('c')`, sql`INSERT INTO notes VALUES ('a')`]),
    ).rejects.toThrow(/duplicate key/);
    expect(await client.query`SELECT body FROM notes ORDER BY body`).toEqual([{ body: "a" }, { body: "b" }]);
    expect(reports.filter((report) => report.changes !== undefined).map((report) => report.changes)).toEqual([
      1, 1, 1,
    ]);
  });
});
