import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextBlocks, isHistoryProvider } from "@contextblocks/core";
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
    history: { retention: 3 },
  });
  return new ContextBlocks([{ label: "profile", maxTokens: 200, provider }]);
}

describe("SqlContextProvider history on better-sqlite3", () => {
  it("is off by default (one row per write) and recognised by shape when on", () => {
    const database = new Database(":memory:");
    const plain = new SqlContextProvider(fromBetterSqlite3(database), "memory");
    expect(isHistoryProvider(plain)).toBe(false);
    const kept = new SqlContextProvider(fromBetterSqlite3(database), { label: "memory", history: true });
    expect(isHistoryProvider(kept)).toBe(true);
    expect(
      () => new SqlContextProvider(fromBetterSqlite3(database), { label: "m", history: { retention: 0 } }),
    ).toThrow(/history must be/);
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
    const history = await restarted.blockHistory("profile");
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
    expect((await again.blockHistory("profile")).map((version) => version.version)).toEqual([4, 3, 2]);
    expect((await again.blockHistory("profile", { limit: 1 }))[0]?.source).toEqual({
      kind: "api",
      name: "restoreBlock",
      restoredFrom: 1,
    });
    // Version 1 left the ring of three; its slot now holds version 4.
    await expect(again.restoreBlock("profile", 1)).rejects.toMatchObject({ code: "NOT_FOUND" });
    const rows = database.prepare("SELECT COUNT(*) AS n FROM contextblocks_block_history").get() as {
      n: number;
    };
    expect(rows.n).toBe(3);
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
    const provider = new SqlContextProvider(fromBetterSqlite3(database), { label: "p", history: true });
    expect(await provider.setIf("something", "x")).toBe(false);
    expect(await provider.setIf("", "first")).toBe(true);
    expect(await provider.setIf("", "second")).toBe(false);
    expect(await provider.setIf("first", "second")).toBe(true);
    expect(await provider.get()).toBe("second");
    expect((await provider.history?.())?.map((version) => version.content)).toEqual(["second", "first"]);
  });
});
