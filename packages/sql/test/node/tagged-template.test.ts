import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromTaggedTemplate, type StatementReport, sql } from "../../src/index.js";

/** A real tagged-template source over better-sqlite3, shaped like an agents Agent's `sql` (no `ctx`). */
function taggedTemplateOver(temporary: TemporaryDatabase) {
  const calls: { strings: readonly string[]; values: unknown[] }[] = [];
  return {
    calls,
    sql(strings: TemplateStringsArray, ...values: unknown[]) {
      calls.push({ strings: [...strings], values });
      const statement = temporary.database.prepare(strings.join("?"));
      if (statement.reader) return statement.all(...values);
      statement.run(...values);
      return [];
    },
  };
}

describe("fromTaggedTemplate", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  it("passes template parts and values through, never splicing values", async () => {
    const source = taggedTemplateOver(temporary);
    const client = fromTaggedTemplate(source);
    await client.query`CREATE TABLE notes (body TEXT)`;
    const hostile = "'; DROP TABLE notes; --";
    await client.run(sql`INSERT INTO notes VALUES (${hostile})`);
    expect(source.calls[1]).toEqual({ strings: ["INSERT INTO notes VALUES (", ")"], values: [hostile] });
    expect(await client.query`SELECT body FROM notes`).toEqual([{ body: hostile }]);
  });

  it("hands the source a real TemplateStringsArray with raw parts", async () => {
    let received: TemplateStringsArray | undefined;
    const client = fromTaggedTemplate({
      sql(strings: TemplateStringsArray) {
        received = strings;
        return [];
      },
    });
    await client.run(sql`SELECT ${sql`1`} + ${2}`);
    expect(received?.raw).toEqual(["SELECT 1 + ", ""]);
  });

  it("accepts a source whose sql is async", async () => {
    const source = taggedTemplateOver(temporary);
    const client = fromTaggedTemplate({
      sql: async (strings: TemplateStringsArray, ...values: unknown[]) => source.sql(strings, ...values),
    });
    await client.query`CREATE TABLE notes (body TEXT)`;
    await client.query`INSERT INTO notes VALUES (${"x"})`;
    expect(await client.query`SELECT body FROM notes`).toEqual([{ body: "x" }]);
  });

  it("is honest that batch is not atomic without ctx.storage", async () => {
    const client = fromTaggedTemplate(taggedTemplateOver(temporary));
    expect(client.atomic).toBe(false);
    // An agents Agent's sql runs on a Durable Object: its rows read are billed.
    expect(client.billsRows).toBe(true);
    await client.query`CREATE TABLE notes (body TEXT NOT NULL)`;
    await expect(
      client.batch([sql`INSERT INTO notes VALUES (${"applied"})`, sql`INSERT INTO notes VALUES (${null})`]),
    ).rejects.toThrow(/NOT NULL/);
    // Not atomic: the first statement stays applied, as `atomic: false` says.
    expect(await client.query`SELECT body FROM notes`).toEqual([{ body: "applied" }]);
  });

  it("binds booleans as 1/0 and reports statement text", async () => {
    const reports: StatementReport[] = [];
    const client = fromTaggedTemplate(taggedTemplateOver(temporary), {
      onStatement: (report) => reports.push(report),
    });
    const [row] = await client.query`SELECT ${true} AS yes, ${false} AS no`;
    expect(row).toEqual({ yes: 1, no: 0 });
    expect(reports).toEqual([{ text: "SELECT ? AS yes, ? AS no" }]);
  });

  it("answers at once (runSync) only beside a Durable Object's ctx.storage, as an agents Agent has", async () => {
    const plain = fromTaggedTemplate(taggedTemplateOver(temporary));
    expect(plain.runSync).toBeUndefined();
    const storage = {
      transactionSync: <T>(closure: () => T): T => temporary.database.transaction(closure)(),
    };
    // An Agent: its `sql`, and its Durable Object's `ctx` (a field the client finds, not one it is typed with).
    const agentLike = { ...taggedTemplateOver(temporary), ctx: { storage } };
    const agent = fromTaggedTemplate(agentLike);
    agent.runSync?.(sql`CREATE TABLE notes (body TEXT)`);
    agent.runSync?.(sql`INSERT INTO notes VALUES (${"at once"})`);
    expect(agent.runSync?.(sql`SELECT body FROM notes`)).toEqual([{ body: "at once" }]);
    // A group at once, all or nothing: the failing second statement takes the first back with it.
    expect(plain.batchSync).toBeUndefined();
    expect(
      agent.batchSync?.([sql`INSERT INTO notes VALUES (${"grouped"})`, sql`SELECT count(*) AS n FROM notes`]),
    ).toEqual([[], [{ n: 2 }]]);
    expect(() =>
      agent.batchSync?.([sql`INSERT INTO notes VALUES (${"undone"})`, sql`INSERT INTO missing VALUES (1)`]),
    ).toThrow(/no such table: missing/);
    expect(agent.runSync?.(sql`SELECT body FROM notes ORDER BY rowid`)).toEqual([
      { body: "at once" },
      { body: "grouped" },
    ]);
    expect(agent.batchSync?.([])).toEqual([]);
    // An async sql beside a storage cannot answer at once: refused by name, not handed over as a promise.
    const pretenderLike = { sql: async () => [], ctx: { storage } };
    const pretender = fromTaggedTemplate(pretenderLike);
    expect(() => pretender.runSync?.(sql`SELECT 1`)).toThrow(/runSync needs a synchronous sql method/);
  });

  it("refuses a source that does not return rows", async () => {
    const client = fromTaggedTemplate({ sql: () => "nope" as unknown as unknown[] });
    await expect(client.query`SELECT 1`).rejects.toThrow(/must return an array of rows/);
  });
});
