// agents' Postgres provider names from the compatibility entry, on a throwaway PostgreSQL cluster: a
// `pg.Client` and agents' `PostgresConnection` (`execute` with `?` placeholders) both work, and rows written
// through one are read through the other.
import {
  type PostgresConnection,
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
  Session,
} from "@contextblocks/agents/experimental/memory/session";
import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let cluster: ThrowawayCluster;
let client: pg.Client;
beforeAll(async () => {
  cluster = await startThrowawayCluster();
  client = new pg.Client({ connectionString: cluster.connectionString });
  await client.connect();
}, 120_000);
afterAll(async () => {
  await client?.end();
  cluster?.stop();
});

/** A `PostgresConnection` as agents' users write one: `?` placeholders over a `pg.Client`. */
function connection(target: pg.Client, statements: string[]): PostgresConnection {
  return {
    async execute(query, args = []) {
      statements.push(query);
      let index = 0;
      const result = await target.query(
        query.replace(/\?/g, () => `$${++index}`),
        args,
      );
      return { rows: result.rows };
    },
  };
}

describe("agents' Postgres providers", () => {
  it("PostgresSessionProvider over a PostgresConnection stores, reads back and searches; a pg.Client sees the rows", async () => {
    const statements: string[] = [];
    const session = new Session(new PostgresSessionProvider(connection(client, statements), "chat-1"));
    await session.appendMessage({
      id: "m1",
      role: "user",
      parts: [{ type: "text", text: "the ferry leaves at nine" }],
    });
    await session.appendMessage({ id: "m2", role: "assistant", parts: [{ type: "text", text: "noted" }] });
    expect((await session.getHistory()).map((m) => m.id)).toEqual(["m1", "m2"]);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.some((statement) => /\$\d/.test(statement))).toBe(false);

    const again = new Session(new PostgresSessionProvider(client, "chat-1"));
    expect((await again.getHistory()).map((m) => m.id)).toEqual(["m1", "m2"]);
    expect((await again.search("ferry")).map((hit) => hit.id)).toContain("m1");
    expect(await new Session(new PostgresSessionProvider(client, "chat-2")).getHistory()).toEqual([]);
  });

  it("PostgresContextProvider and PostgresSearchProvider keep agents' constructors", async () => {
    const memory = new PostgresContextProvider(connection(client, []), "memory");
    await memory.set("likes tea");
    expect(await new PostgresContextProvider(client, "memory").get()).toBe("likes tea");

    const notes = new PostgresSearchProvider(client);
    notes.init("notes");
    await notes.set("harbour", "the harbour master keeps the ferry timetable");
    expect(await notes.search("ferry timetable")).toContain("harbour master");
  });

  it("PostgresSearchProvider over a PostgresConnection finds the words of an address, as over a pg.Client", async () => {
    // Its statements once held a `?` in a string literal, which such a connection numbers as a placeholder: the
    // table's words were then split by another expression, and the address's words were not found.
    const statements: string[] = [];
    const notes = new PostgresSearchProvider(connection(client, statements));
    notes.init("notes-over-a-connection");
    await notes.set("harbour", "write to the harbour master at master@harbour-office.example");
    expect(await notes.search("harbour-office")).toContain("harbour master");
    expect(await notes.search("example")).toContain("harbour master");
    const viaClient = new PostgresSearchProvider(client);
    viaClient.init("notes-over-a-connection");
    expect(await viaClient.search("example")).toContain("harbour master");
    expect(statements.filter((statement) => statement.includes("?")).length).toBeGreaterThan(0);
  });

  it("anything else is refused with an error naming the accepted clients", () => {
    expect(() => new PostgresContextProvider(42 as never, "memory")).toThrow(
      /pg\.Client, a pg\.Pool or a PostgresConnection/,
    );
  });
});
