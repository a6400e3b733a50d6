import { isContextError } from "@contextblocks/core";
import { namespacePrefix, rowLabel } from "@contextblocks/core/store-kit";
import { fromBetterSqlite3, type SqlClient } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { SqlContextProvider, SqlRunStateStore, SqlSessionRegistry, SqlSkillProvider } from "../src/index.js";

let database: Database.Database;
let client: SqlClient;
beforeEach(() => {
  database = new Database(":memory:");
  client = fromBetterSqlite3(database);
});

const tables = () =>
  (
    database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((row) => row.name);

describe("sql-stores on SQLite statements", () => {
  it("each store creates only its own table, on its first write; reads create nothing", async () => {
    const memory = new SqlContextProvider(client, "memory");
    expect(await memory.get()).toBeNull();
    expect(await new SqlRunStateStore(client).load("s")).toBeNull();
    expect(await new SqlSessionRegistry(client).list()).toEqual([]);
    expect(tables()).toEqual([]);
    await memory.set("Ada");
    // History is on by default: the block's table and its versions.
    expect(tables()).toEqual([
      "cf_agents_context_blocks",
      "contextblocks_block_history",
      "contextblocks_block_history_batches",
    ]);
    await new SqlSkillProvider(client, "skills").set("deploy", "Run it.");
    expect(tables()).toEqual([
      "cf_agents_context_blocks",
      "contextblocks_block_history",
      "contextblocks_block_history_batches",
      "contextblocks_skills",
    ]);
    const other = new Database(":memory:");
    await new SqlContextProvider(fromBetterSqlite3(other), { label: "memory", versions: false }).set("Ada");
    expect(other.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()).toEqual([
      { name: "cf_agents_context_blocks" },
    ]);
  });

  it("row labels: namespaced labels share the namespace's prefix and never a plain label's", () => {
    const label = rowLabel("memory", 'tenant "a"');
    expect(label.startsWith(namespacePrefix('tenant "a"'))).toBe(true);
    expect(label.startsWith(namespacePrefix("tenant"))).toBe(false);
    expect(rowLabel("memory", undefined)).toBe("memory");
    expect(() => new SqlContextProvider(client, { label: "\u001fx" })).toThrow(/U\+001F/);
  });

  it("run state: save rewrites only what changed, delete forgets one session", async () => {
    const store = new SqlRunStateStore(client, { owner: "TestStore" });
    await store.save("s1", { a: { n: 1 }, b: { n: 2 } });
    await store.save("s2", { a: { n: 3 } });
    await store.save("s1", { a: { n: 1 } });
    expect(await store.load("s1")).toEqual({ a: { n: 1 } });
    await store.delete("s1");
    expect(await store.load("s1")).toBeNull();
    expect(await store.load("s2")).toEqual({ a: { n: 3 } });
    await expect(store.save("", {})).rejects.toThrow(
      /TestStore.save: the session id must be a non-empty string/,
    );
    database.prepare("UPDATE contextblocks_run_state SET state = 'nope'").run();
    await expect(store.load("s2")).rejects.toThrow(/is not JSON/);
  });

  it("registry: create refuses a duplicate, list is newest first, update of an unknown id is NOT_FOUND", async () => {
    const registry = new SqlSessionRegistry(client);
    const first = await registry.create("one", "First", { model: "m" });
    expect(first).toMatchObject({ id: "one", name: "First", model: "m", input_tokens: 0 });
    await registry.create("two", "Second");
    const duplicate = await registry.create("one", "x").catch((error: unknown) => error);
    expect(isContextError(duplicate) && duplicate.code).toBe("INVALID_INPUT");
    expect((await registry.list()).map((row) => row.id)).toEqual(["two", "one"]);
    // updated_at has millisecond resolution: let the clock move so the update is strictly newer.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await registry.update("one", { name: "Renamed", endReason: "done" });
    expect((await registry.list()).map((row) => row.id)).toEqual(["one", "two"]);
    expect(await registry.get("one")).toMatchObject({ name: "Renamed", end_reason: "done" });
    await registry.addUsage("one", 3, 4, 0.5);
    expect(await registry.get("one")).toMatchObject({
      input_tokens: 3,
      output_tokens: 4,
      estimated_cost: 0.5,
    });
    const missing = await registry.update("nobody", { name: "x" }).catch((error: unknown) => error);
    expect(isContextError(missing) && missing.code).toBe("NOT_FOUND");
    await registry.delete("two");
    expect(await registry.get("two")).toBeNull();
  });
});
