import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import { fromBetterSqlite3, type SqlClient } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { describe, expect, it, vi } from "vitest";
import { SqlContextProvider } from "../src/index.js";

/** The same better-sqlite3 client with only the promise-returning methods, as an asynchronous backend has. */
function asynchronousOnly(client: SqlClient): SqlClient {
  return {
    dialect: client.dialect,
    atomic: client.atomic,
    query: (strings, ...values) => client.query(strings, ...values),
    run: (statement) => client.run(statement),
    batch: (statements) => client.batch(statements),
  };
}

describe("SqlContextProvider.getSync (better-sqlite3)", () => {
  it("reads what get reads, synchronously: the content, or null with no row and with no table", async () => {
    const client = fromBetterSqlite3(new Database(":memory:"));
    const provider = new SqlContextProvider(client, "memory");
    expect(provider.getSync()).toBeNull();
    await provider.set("Likes tea. ═ and 🌍");
    expect(provider.getSync()).toBe("Likes tea. ═ and 🌍");
    expect(provider.getSync()).toBe(await provider.get());
    expect(new SqlContextProvider(client, "other").getSync()).toBeNull();
  });

  it("declines (undefined) on a client that cannot run statements synchronously", async () => {
    const client = fromBetterSqlite3(new Database(":memory:"));
    const provider = new SqlContextProvider(asynchronousOnly(client), "memory");
    await provider.set("Likes tea.");
    expect(provider.getSync()).toBeUndefined();
    expect(await provider.get()).toBe("Likes tea.");
  });

  it("refuses stored content that is not text, as get does", async () => {
    const database = new Database(":memory:");
    const provider = new SqlContextProvider(fromBetterSqlite3(database), "memory");
    await provider.set("x");
    database
      .prepare("UPDATE cf_agents_context_blocks SET content = ? WHERE label = ?")
      .run(Buffer.from([1, 2]), "memory");
    expect(() => provider.getSync()).toThrow(/not text/);
  });

  it("serves a cold start's stored prompt without awaiting get, and a changed configuration still drifts", async () => {
    const database = new Database(":memory:");
    const client = fromBetterSqlite3(database);
    const blocks = (description?: string): ContextConfig[] => [
      {
        label: "memory",
        ...(description === undefined ? {} : { description }),
        provider: new SqlContextProvider(client, "memory"),
      },
    ];
    const first = new ContextBlocks(blocks(), new SqlContextProvider(client));
    await first.setBlock("memory", "Likes tea.");
    const prompt = await first.freezeSystemPrompt();

    const store = new SqlContextProvider(client);
    const get = vi.spyOn(store, "get");
    expect(await new ContextBlocks(blocks(), store).freezeSystemPrompt()).toBe(prompt);
    expect(get).not.toHaveBeenCalled();

    const drifted = await new ContextBlocks(blocks("Facts"), new SqlContextProvider(client), null, {
      onDrift: () => undefined,
    }).freezeSystemPrompt();
    expect(drifted).toContain("MEMORY (Facts)");
    expect(
      database.prepare("SELECT content FROM cf_agents_context_blocks WHERE label = ?").get("_system_prompt"),
    ).toEqual({
      content: drifted,
    });
  });
});
