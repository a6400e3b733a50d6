import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type StatementReport, sql, toSqlClient } from "../../src/index.js";

function inObject<R>(name: string, callback: (state: DurableObjectState) => R | Promise<R>): Promise<R> {
  return runInDurableObject(env.SQL_OBJECT.getByName(name), (_instance, state) => callback(state));
}

/** The shape of an agents Agent for SQL: `sql` as agents implements it, and `ctx`. */
function agentLike(state: DurableObjectState) {
  return {
    ctx: state,
    sql<T = Record<string, string | number | boolean | null>>(
      strings: TemplateStringsArray,
      ...values: (string | number | boolean | null)[]
    ): T[] {
      const query = strings.reduce(
        (text, part, index) => text + part + (index < values.length ? "?" : ""),
        "",
      );
      return [...state.storage.sql.exec(query, ...values)] as T[];
    },
  };
}

describe("toSqlClient (workerd)", () => {
  it("accepts ctx.storage and ctx, reporting rows", async () => {
    await inObject("storage-and-state", async (state) => {
      const reports: StatementReport[] = [];
      const fromStorage = toSqlClient(state.storage, { onStatement: (report) => reports.push(report) });
      const fromState = toSqlClient(state);
      expect(fromStorage.atomic && fromState.atomic).toBe(true);
      await fromStorage.query`CREATE TABLE t (v)`;
      await fromState.query`INSERT INTO t VALUES (${1})`;
      expect(await fromStorage.query`SELECT v FROM t`).toEqual([{ v: 1 }]);
      expect(reports.at(-1)).toEqual({ text: "SELECT v FROM t", rowsRead: 1, rowsWritten: 0 });
    });
  });

  it("accepts an agent-shaped object and makes its batch atomic through ctx.storage", async () => {
    await inObject("agent", async (state) => {
      const client = toSqlClient(agentLike(state));
      expect(client.atomic).toBe(true);
      await client.query`CREATE TABLE notes (body TEXT NOT NULL)`;
      await expect(
        client.batch([
          sql`INSERT INTO notes VALUES (${"rolled back"})`,
          sql`INSERT INTO notes VALUES (${null})`,
        ]),
      ).rejects.toThrow(/NOT NULL/);
      expect(await client.query`SELECT * FROM notes`).toEqual([]);
      await client.batch([sql`INSERT INTO notes VALUES (${"a"})`, sql`INSERT INTO notes VALUES (${"b"})`]);
      expect(await client.query`SELECT count(*) AS n FROM notes`).toEqual([{ n: 2 }]);
    });
  });

  it("rolls an agent batch back when its sql turns out to be async", async () => {
    await inObject("agent-async", async (state) => {
      const agent = agentLike(state);
      // `ctx` is not part of the declared source type (an Agent's ctx is protected), only detected at run time.
      const asyncAgent = {
        ctx: state,
        sql: async (strings: TemplateStringsArray, ...values: (string | number | boolean | null)[]) =>
          agent.sql(strings, ...values),
      };
      const client = toSqlClient(asyncAgent);
      await client.query`CREATE TABLE notes (body TEXT)`;
      await expect(client.batch([sql`INSERT INTO notes VALUES (${"x"})`])).rejects.toThrow(/synchronous sql/);
      expect(await client.query`SELECT * FROM notes`).toEqual([]);
    });
  });

  it("refuses a namespace binding with a TypeError naming what it accepts", () => {
    expect(() => toSqlClient(env.SQL_OBJECT as never)).toThrow(
      /expected a SqlClient, a Durable Object storage/,
    );
  });
});
