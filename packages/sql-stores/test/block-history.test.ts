import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextBlocks } from "@contextblocks/core";
import { isVersionedProvider } from "@contextblocks/core/store-kit";
import { fromBetterSqlite3 } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqlContextProvider } from "../src/index.js";

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function databaseFile(): string {
  const directory = mkdtempSync(join(tmpdir(), "cb-history-"));
  directories.push(directory);
  return join(directory, "agent.db");
}

function agent(database: Database.Database) {
  const provider = new SqlContextProvider(fromBetterSqlite3(database), {
    label: "profile",
    versions: { retention: 3 },
  });
  return new ContextBlocks([{ label: "profile", maxTokens: 200, provider }]);
}

describe("SqlContextProvider history on better-sqlite3", () => {
  it("is on by default, off with versions: false, and recognised by shape", async () => {
    const database = new Database(":memory:");
    const kept = new SqlContextProvider(fromBetterSqlite3(database), "memory");
    expect(isVersionedProvider(kept)).toBe(true);
    await kept.set("one");
    await kept.set("two");
    expect((await kept.versions?.())?.map((version) => version.content)).toEqual(["two", "one"]);
    // A getter on the class, made once: the same function on every read, and usable detached.
    expect(kept.versions).toBe(kept.versions);
    const detached = kept.versions;
    expect((await detached?.({ limit: 1 }))?.map((version) => version.content)).toEqual(["two"]);
    const plain = new SqlContextProvider(fromBetterSqlite3(database), { label: "plain", versions: false });
    expect(isVersionedProvider(plain)).toBe(false);
    expect(plain.versions).toBeUndefined();
    await plain.set("no version");
    expect(
      database.prepare("SELECT COUNT(*) AS n FROM contextblocks_block_history WHERE label = 'plain'").get(),
    ).toEqual({ n: 0 });
    expect(
      () => new SqlContextProvider(fromBetterSqlite3(database), { label: "m", versions: { retention: 0 } }),
    ).toThrow(/history must be/);
  });

  it("keeps no versions of the frozen prompt unless asked: its store writes one row per freeze", async () => {
    const database = new Database(":memory:");
    const client = fromBetterSqlite3(database);
    // Versions kept in the block's own row (its recent versions) or in the per-version ring.
    const versionsOf = (label: string) =>
      database
        .prepare(
          `SELECT coalesce((SELECT json_array_length(history_recent) FROM cf_agents_context_blocks WHERE label = @label), 0)
  + (SELECT COUNT(*) FROM contextblocks_block_history WHERE label = @label) AS n`,
        )
        .get({ label }) as { n: number };
    const memory = new SqlContextProvider(client, "memory");
    const context = new ContextBlocks(
      [{ label: "memory", maxTokens: 200, provider: memory }],
      new SqlContextProvider(client), // labelled "_system_prompt" by ContextBlocks' init
    );
    await context.setBlock("memory", "Likes tea");
    await context.freezeSystemPrompt();
    await context.setBlock("memory", "Likes coffee");
    await context.refreshSystemPrompt();
    expect(versionsOf("memory")).toEqual({ n: 2 });
    expect(versionsOf("_system_prompt")).toEqual({ n: 0 });
    expect(
      database.prepare("SELECT content FROM cf_agents_context_blocks WHERE label = '_system_prompt'").get(),
    ).toEqual({ content: await context.freezeSystemPrompt() });

    const asked = new SqlContextProvider(client, { label: "_system_prompt", versions: true });
    await asked.set("kept on purpose");
    expect(versionsOf("_system_prompt")).toEqual({ n: 1 });
  });

  it("keeps versions with their source across a restart, restores as a new version, keeps only the retention", async () => {
    const file = databaseFile();
    let database = new Database(file);
    const first = agent(database);
    await first.setBlock("profile", "Name: Ada");
    await first.appendToBlock("profile", "City: Paris");
    await first.editBlock("profile", "Paris", "Lyon", {
      source: { kind: "tool", name: "edit_context", toolCallId: "call-1" },
    });
    await first.setBlock("profile", "Name: Ada\nCity: Lyon"); // unchanged: no version
    database.close();

    database = new Database(file);
    const restarted = agent(database);
    const history = await restarted.blockVersions("profile");
    expect(history.map((version) => [version.version, version.content, version.source])).toEqual([
      [3, "Name: Ada\nCity: Lyon", { kind: "tool", name: "edit_context", toolCallId: "call-1" }],
      [2, "Name: Ada\nCity: Paris", { kind: "api", name: "appendToBlock" }],
      [1, "Name: Ada", { kind: "api", name: "setBlock" }],
    ]);
    expect(history[0]?.writtenAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    expect((await restarted.restoreBlock("profile", 1)).content).toBe("Name: Ada");
    database.close();
    database = new Database(file);
    const again = agent(database);
    await again.load();
    expect(again.getBlock("profile")?.content).toBe("Name: Ada");
    expect((await again.blockVersions("profile")).map((version) => version.version)).toEqual([4, 3, 2]);
    expect((await again.blockVersions("profile", { limit: 1 }))[0]?.source).toEqual({
      kind: "api",
      name: "restoreBlock",
      restoredFrom: 1,
    });
    // Version 1 is past the retention of three: it is no longer a version, though the row's recent
    // versions hold it until they move out to a batch.
    await expect(again.restoreBlock("profile", 1)).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(
      database.prepare("SELECT history_recent AS recent FROM cf_agents_context_blocks").get(),
    ).toMatchObject({
      recent: expect.stringMatching(/^\[\[1,"Name: Ada",/),
    });
    database.close();
  });

  it("two agents sharing the row never lose each other's edits; an edit whose old_str is gone fails", async () => {
    const database = new Database(":memory:");
    const alice = agent(database);
    const bob = agent(database);
    await alice.setBlock("profile", "Name: Ada\nCity: Paris");
    await bob.load();
    await alice.editBlock("profile", "Name: Ada", "Name: Ada Lovelace");
    await bob.editBlock("profile", "City: Paris", "City: Lyon");
    await alice.load();
    expect(alice.getBlock("profile")?.content).toBe("Name: Ada Lovelace\nCity: Lyon");
    await expect(bob.editBlock("profile", "City: Paris", "City: Rome")).rejects.toMatchObject({
      code: "NO_MATCH",
    });
  });

  it("setIf writes only over the expected text, with its version in the same transaction", async () => {
    const database = new Database(":memory:");
    const provider = new SqlContextProvider(fromBetterSqlite3(database), { label: "p", versions: true });
    expect(await provider.setIf("something", "x")).toBe(false);
    expect(await provider.setIf("", "first")).toBe(true);
    expect(await provider.setIf("", "second")).toBe(false);
    expect(await provider.setIf("first", "second")).toBe(true);
    expect(await provider.get()).toBe("second");
    expect((await provider.versions?.())?.map((version) => version.content)).toEqual(["second", "first"]);
  });

  it("keeps the newest version number on the block's row, so a write never searches the history", async () => {
    const database = new Database(":memory:");
    const provider = new SqlContextProvider(fromBetterSqlite3(database), {
      label: "p",
      versions: { retention: 2 },
    });
    for (const content of ["a", "b", "c", "c", "d"]) await provider.set(content);
    expect(await provider.setIf("d", "e")).toBe(true);
    expect(await provider.setIf("d", "f")).toBe(false);
    expect(database.prepare("SELECT history_version FROM cf_agents_context_blocks").get()).toEqual({
      history_version: 5,
    });
    // The versions are in the row itself (one row written per write); nothing in the per-version ring.
    const recent = database
      .prepare("SELECT history_recent AS recent FROM cf_agents_context_blocks")
      .get() as {
      recent: string;
    };
    expect(
      (JSON.parse(recent.recent) as unknown[][]).map(([version, content]) => [version, content]),
    ).toEqual([
      [1, "a"],
      [2, "b"],
      [3, "c"],
      [4, "d"],
      [5, "e"],
    ]);
    expect(database.prepare("SELECT COUNT(*) AS n FROM contextblocks_block_history").get()).toEqual({ n: 0 });
    expect((await provider.versions?.())?.map((version) => version.content)).toEqual(["e", "d"]);
  });

  it("moves recent versions out in batches: every kept version survives, one batch row per 16 writes", async () => {
    const database = new Database(":memory:");
    const client = fromBetterSqlite3(database);
    const options = { label: "notes", versions: { retention: 20 } };
    const same = new SqlContextProvider(client, options);
    for (let version = 1; version <= 40; version++) await same.set(`note ${version}`);
    const counts = () =>
      database
        .prepare(
          `SELECT json_array_length(history_recent) AS recent,
  (SELECT COUNT(*) FROM contextblocks_block_history_batches) AS batches FROM cf_agents_context_blocks`,
        )
        .get();
    // The writes after the 16th and the 32nd moved the row's sixteen versions to a batch each.
    expect(counts()).toEqual({ recent: 8, batches: 2 });
    const kept = async (provider: SqlContextProvider) =>
      (await provider.versions?.())?.map((version) => [version.version, version.content]);
    const expected = (newest: number) =>
      Array.from({ length: 20 }, (_, index) => [newest - index, `note ${newest - index}`]);
    expect(await kept(same)).toEqual(expected(40));

    // A store made afresh for every write (a Durable Object woken for each) does not know how full the
    // row is: each of its writes moves a full array out first, so the row never holds more than a batch.
    for (let version = 41; version <= 100; version++) {
      await new SqlContextProvider(client, options).set(`note ${version}`);
      expect((counts() as { recent: number }).recent).toBeLessThanOrEqual(16);
    }
    expect(await kept(new SqlContextProvider(client, options))).toEqual(expected(100));
    // Slots are a ring: retention 20 in batches of 16 needs three.
    expect((counts() as { batches: number }).batches).toBeLessThanOrEqual(3);

    // A large content keeps its version in its own slot, and reads still merge every place in order.
    const large = "x".repeat(20_000);
    await same.set(large);
    await same.set("after the large one");
    const versions = await same.versions?.({ limit: 3 });
    expect(versions?.map((version) => [version.version, version.content.length])).toEqual([
      [102, "after the large one".length],
      [101, 20_000],
      [100, "note 100".length],
    ]);
    expect(await same.versions?.({ version: 101 })).toHaveLength(1);
  });

  it("opens databases created before history: agents@0.22.0's table and an earlier history table", async () => {
    const database = new Database(":memory:");
    // agents@0.22.0 (agents/context) creates and writes the blocks table itself.
    database.exec(`CREATE TABLE cf_agents_context_blocks (
  label TEXT PRIMARY KEY, content TEXT NOT NULL, updated_at DATETIME DEFAULT CURRENT_TIMESTAMP)`);
    database
      .prepare("INSERT INTO cf_agents_context_blocks (label, content) VALUES (?, ?)")
      .run("soul", "old");
    // An earlier contextblocks kept three versions of "profile" with no number on the row.
    database.exec(`CREATE TABLE contextblocks_block_history (
  label TEXT NOT NULL, slot INTEGER NOT NULL, version INTEGER NOT NULL, content TEXT NOT NULL,
  source TEXT NOT NULL, written_at TEXT NOT NULL, PRIMARY KEY (label, slot)) WITHOUT ROWID`);
    database
      .prepare("INSERT INTO cf_agents_context_blocks (label, content) VALUES (?, ?)")
      .run("profile", "v3");
    const insert = database.prepare(
      'INSERT INTO contextblocks_block_history VALUES (\'profile\', ?, ?, ?, \'{"kind":"api","name":"set"}\', \'2026-01-01T00:00:00.000Z\')',
    );
    for (const version of [1, 2, 3]) insert.run(version % 50, version, `v${version}`);

    const client = fromBetterSqlite3(database);
    const soul = new SqlContextProvider(client, "soul");
    expect(await soul.get()).toBe("old");
    expect(await soul.versions?.()).toEqual([]);
    await soul.set("new");
    expect((await soul.versions?.())?.map((version) => [version.version, version.content])).toEqual([
      [1, "new"],
    ]);
    const profile = new SqlContextProvider(client, "profile");
    expect((await profile.versions?.())?.map((version) => version.version)).toEqual([3, 2, 1]);
    await profile.set("v4");
    expect((await profile.versions?.())?.map((version) => version.version)).toEqual([4, 3, 2, 1]);
    // Opening again adds nothing twice.
    await new SqlContextProvider(fromBetterSqlite3(database), "other").set("x");
    const columns = database.prepare("SELECT name FROM pragma_table_info('cf_agents_context_blocks')").all();
    expect(columns).toEqual([
      { name: "label" },
      { name: "content" },
      { name: "updated_at" },
      { name: "history_version" },
      { name: "history_recent" },
    ]);
  });
});
