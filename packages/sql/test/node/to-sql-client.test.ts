import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBetterSqlite3, type SqlSource, sql, toSqlClient } from "../../src/index.js";
import { isPgClient, isPgPool, isPostgresJs, toSqliteClient } from "../../src/store-kit.js";

describe("toSqlClient (Node)", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  it("turns a better-sqlite3 Database into an atomic client", async () => {
    const client = toSqlClient(temporary.database);
    expect(client.atomic).toBe(true);
    await client.batch([sql`CREATE TABLE t (v)`, sql`INSERT INTO t VALUES (${1})`]);
    expect(await client.query`SELECT v FROM t`).toEqual([{ v: 1 }]);
  });

  it("returns a SqlClient unchanged", () => {
    const client = fromBetterSqlite3(temporary.database);
    expect(toSqlClient(client)).toBe(client);
  });

  it("refuses onStatement for a ready SqlClient instead of ignoring it", () => {
    const client = fromBetterSqlite3(temporary.database);
    expect(() => toSqlClient(client, { onStatement: () => {} })).toThrow(/onStatement/);
  });

  it("picks the tagged-template adapter for an object with a sql method", async () => {
    const client = toSqlClient({ sql: (strings: TemplateStringsArray) => [{ text: strings.join("?") }] });
    expect(client.atomic).toBe(false);
    expect(await client.query`SELECT ${1}`).toEqual([{ text: "SELECT ?" }]);
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["a number", 42],
    ["a string", "file.sqlite"],
    ["an empty object", {}],
    ["an object with query but no connect", { query: async () => ({ rows: [] }) }],
    ["storage without transactionSync", { sql: { exec: () => ({}) } }],
  ])("refuses %s with a TypeError naming what it accepts", (_name, source) => {
    expect(() => toSqlClient(source as unknown as SqlSource)).toThrow(TypeError);
    expect(() => toSqlClient(source as unknown as SqlSource)).toThrow(
      /expected a SqlClient, a Durable Object storage \(ctx\.storage\), a Durable Object state \(ctx\), an object with a tagged-template sql method \(an agents Agent\), a better-sqlite3 Database, a node-postgres Client or Pool, or a postgres \(porsager\) sql instance; got/,
    );
  });
});

describe("toSqlClient (Postgres shapes; the real drivers are tested in @contextblocks/postgres)", () => {
  const query = async () => ({ rows: [], rowCount: 0 });
  const connect = async () => undefined;

  it("reads query + connect as a node-postgres Client and adds idleCount for a Pool", () => {
    const client = { query, connect };
    const pool = { query, connect, idleCount: 0 };
    expect(isPgClient(client)).toBe(true);
    expect(isPgPool(client)).toBe(false);
    expect(isPgPool(pool)).toBe(true);
    expect(isPgClient(pool)).toBe(false);
    expect(toSqlClient(client).dialect).toBe("postgres");
    expect(toSqlClient(pool).dialect).toBe("postgres");
  });

  it("reads a function with unsafe + begin as a postgres (porsager) sql instance", () => {
    const instance = Object.assign(() => undefined, { unsafe: query, begin: connect });
    expect(isPostgresJs(instance)).toBe(true);
    expect(toSqlClient(instance as unknown as SqlSource).dialect).toBe("postgres");
  });
});

describe("toSqliteClient (what SQLite backends call, so a Worker does not bundle the Postgres adapters)", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  it("shares the client toSqlClient built for the same handle, either way round", () => {
    const first = toSqlClient(temporary.database);
    expect(toSqliteClient(temporary.database)).toBe(first);
    const agent = { sql: (strings: TemplateStringsArray) => [{ text: strings.join("?") }] };
    const second = toSqliteClient(agent);
    expect(toSqlClient(agent)).toBe(second);
    expect(second.dialect).toBe("sqlite");
  });

  it("refuses a Postgres handle by name instead of adapting it", () => {
    const query = async () => ({ rows: [], rowCount: 0 });
    const connect = async () => undefined;
    const postgresJs = Object.assign(async () => [], { unsafe: async () => [], begin: async () => [] });
    for (const source of [{ query, connect }, { query, connect, idleCount: 0 }, postgresJs]) {
      expect(() => toSqliteClient(source as unknown as SqlSource)).toThrow(
        /this is a Postgres database .*use @contextblocks\/postgres/,
      );
    }
  });

  it("refuses anything else with a TypeError naming the SQLite handles it accepts", () => {
    expect(() => toSqliteClient({} as unknown as SqlSource)).toThrow(
      /toSqliteClient: expected a SqlClient, .* or a better-sqlite3 Database; got/,
    );
  });
});
