import { fromPg, fromPostgresJs, sql, toSqlClient } from "@contextblocks/sql";
import type { PostgresJsSql } from "@contextblocks/sql/store-kit";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSchema, type TestSchema } from "./database.js";

// The node-postgres and postgres (porsager) adapters send each statement text as a prepared statement, parsed
// once per connection. Observed through Postgres itself: `pg_prepared_statements` lists what the connection
// it is read on has prepared (read with an unnamed statement, which it never lists).

let schema: TestSchema;
beforeEach(async () => {
  schema = await createSchema();
});
afterEach(async () => {
  await schema.drop();
});

interface Prepared {
  name: string;
  statement: string;
}

async function preparedOn(connection: pg.Client | pg.PoolClient): Promise<Prepared[]> {
  const { rows } = await connection.query("SELECT name, statement FROM pg_prepared_statements ORDER BY name");
  return rows as Prepared[];
}

describe("named prepared statements (node-postgres)", () => {
  it("prepares a text once on a connection and runs it with each call's values", async () => {
    const connection = await schema.client();
    const client = fromPg(connection);
    const read = (value: number) => client.query<{ twice: number }>`SELECT ${value}::int * 2 AS twice`;
    expect(await read(1)).toEqual([{ twice: 2 }]);
    expect(await read(21)).toEqual([{ twice: 42 }]);
    const prepared = await preparedOn(connection);
    expect(prepared).toEqual([
      { name: expect.stringMatching(/^cb_[0-9a-f]{16}_\d+$/), statement: "SELECT $1::int * 2 AS twice" },
    ]);
  });

  it("gives two texts two names, and the same text the same name in another adapter", async () => {
    const connection = await schema.client();
    const first = fromPg(connection);
    await first.query`SELECT ${1}::int AS one`;
    await first.query`SELECT ${2}::int AS two`;
    // Another adapter on the same Client finds the statement it would have prepared already there.
    await fromPg(connection).query`SELECT ${1}::int AS one`;
    const prepared = await preparedOn(connection);
    expect(prepared.map((row) => row.statement).sort()).toEqual([
      "SELECT $1::int AS one",
      "SELECT $1::int AS two",
    ]);
    expect(new Set(prepared.map((row) => row.name)).size).toBe(2);
  });

  it("prepares on every pooled connection it runs on", async () => {
    const pool = schema.pool(2);
    const client = fromPg(pool);
    const [first, second] = [await pool.connect(), await pool.connect()];
    first.release();
    second.release();
    // Both connections idle: two statements at once run on both.
    await Promise.all([
      client.query`SELECT ${1}::int, pg_sleep(0.05)`,
      client.query`SELECT ${2}::int, pg_sleep(0.05)`,
    ]);
    const names = await Promise.all(
      [await pool.connect(), await pool.connect()].map(async (connection) => {
        const prepared = await preparedOn(connection);
        connection.release();
        return prepared.map((row) => row.statement);
      }),
    );
    expect(names).toEqual([["SELECT $1::int, pg_sleep(0.05)"], ["SELECT $1::int, pg_sleep(0.05)"]]);
  });

  it("leaves the connection usable after a statement that fails to prepare or to run", async () => {
    const connection = await schema.client();
    const client = fromPg(connection);
    await expect(client.query`SELECT nothing FROM no_such_table WHERE x = ${1}`).rejects.toThrow(
      /no_such_table/,
    );
    const divide = (by: number) => client.query<{ quotient: number }>`SELECT 10 / ${by}::int AS quotient`;
    await expect(divide(0)).rejects.toThrow(/division by zero/);
    expect(await divide(5)).toEqual([{ quotient: 2 }]);
    // The text that failed to parse was never prepared; it fails again the same way, not as a missing name.
    await expect(client.query`SELECT nothing FROM no_such_table WHERE x = ${1}`).rejects.toThrow(
      /no_such_table/,
    );
    expect((await preparedOn(connection)).map((row) => row.statement)).toEqual([
      "SELECT 10 / $1::int AS quotient",
    ]);
  });

  for (const kind of ["Client", "Pool"] as const) {
    it(`a batch on a ${kind} still rolls back, and its statements run again afterwards`, async () => {
      const source = kind === "Pool" ? schema.pool(1) : await schema.client();
      const client = fromPg(source);
      await client.query`CREATE TABLE notes (body TEXT PRIMARY KEY)`;
      const insert = (body: string) => sql`INSERT INTO notes VALUES (${body})`;
      await expect(client.batch([insert("a"), insert("b"), insert("a")])).rejects.toThrow(/duplicate key/);
      expect(await client.query`SELECT count(*)::int AS n FROM notes`).toEqual([{ n: 0 }]);
      // Prepared inside the rolled-back transaction, the statement outlives it (Postgres does not roll
      // prepared statements back) and node-postgres reuses it.
      await client.batch([insert("a"), insert("b")]);
      expect(await client.query`SELECT body FROM notes ORDER BY body`).toEqual([
        { body: "a" },
        { body: "b" },
      ]);
    });
  }

  it("refuses a namedStatements that is not a boolean, naming the option and the value", async () => {
    const connection = await schema.client();
    expect(() => fromPg(connection, { namedStatements: "no" as unknown as boolean })).toThrow(
      /fromPg: namedStatements must be true or false, got a string/,
    );
    expect(() =>
      fromPostgresJs(schema.postgresJs(1) as unknown as PostgresJsSql, {
        namedStatements: 0 as unknown as boolean,
      }),
    ).toThrow(/fromPostgresJs: namedStatements must be true or false/);
  });

  it("sends unnamed statements with namedStatements: false", async () => {
    const connection = await schema.client();
    for (const client of [
      fromPg(connection, { namedStatements: false }),
      toSqlClient(connection, { namedStatements: false }),
    ]) {
      expect(await client.query`SELECT ${3}::int AS three`).toEqual([{ three: 3 }]);
      await client.batch([sql`SELECT ${1}::int AS one`, sql`SELECT ${2}::int AS two`]);
    }
    expect(await preparedOn(connection)).toEqual([]);
  });
});

describe("prepared statements (postgres, porsager)", () => {
  // The driver prepares its own query for array types on connecting: only ours are compared.
  const preparedIn = async (instance: PostgresJsSql) =>
    [...(await instance.unsafe("SELECT statement FROM pg_prepared_statements ORDER BY statement"))]
      .map((row) => (row as { statement: string }).statement)
      .filter((statement) => statement.includes("AS value"));

  it("prepares a text once on a connection, and not at all with namedStatements: false", async () => {
    const instance = schema.postgresJs(1) as unknown as PostgresJsSql;
    const client = fromPostgresJs(instance);
    for (const value of [1, 2]) {
      expect(await client.query`SELECT ${value}::int AS value`).toEqual([{ value }]);
    }
    expect(await preparedIn(instance)).toEqual(["SELECT $1::int AS value"]);

    const unnamed = schema.postgresJs(1) as unknown as PostgresJsSql;
    const unprepared = fromPostgresJs(unnamed, { namedStatements: false });
    for (const value of [1, 2]) {
      expect(await unprepared.query`SELECT ${value}::int AS value`).toEqual([{ value }]);
    }
    expect(await preparedIn(unnamed)).toEqual([]);
  });
});
