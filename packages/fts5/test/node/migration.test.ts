import { ContextBlocks, entryKey } from "@contextblocks/core";
import { fromBetterSqlite3, type SqlClient } from "@contextblocks/sql";
import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { indexTable, legacyTable } from "../../src/schema.js";
import { keysOf, memoryDatabase } from "../support/databases.js";

/**
 * Entries written by agents/context's AgentSearchProvider (`cf_agents_search_fts`) are searchable after
 * switching to this provider, with nothing for the user to do. The rows are written here with the exact
 * statements that provider runs.
 */

function agentsSearchProvider(database: Database.Database, label: string) {
  const run = (text: string, ...values: string[]) => database.prepare(text).run(...values);
  run(`CREATE VIRTUAL TABLE IF NOT EXISTS cf_agents_search_fts
      USING fts5(
        label UNINDEXED,
        key UNINDEXED,
        content,
        tokenize='porter unicode61'
      )`);
  run("DROP TABLE IF EXISTS cf_agents_search_entries");
  return {
    set(key: string, content: string) {
      run(
        `DELETE FROM cf_agents_search_fts
      WHERE label = ? AND key = ?`,
        label,
        key,
      );
      run(
        `INSERT INTO cf_agents_search_fts (label, key, content)
      VALUES (?, ?, ?)`,
        label,
        key,
        content,
      );
    },
  };
}

function legacyRows(database: Database.Database, label: string): { key: string; content: string }[] {
  return database
    .prepare(`SELECT key, content FROM ${legacyTable} WHERE label = ? ORDER BY rowid`)
    .all(label) as { key: string; content: string }[];
}

function seed(database: Database.Database): void {
  const knowledge = agentsSearchProvider(database, "knowledge");
  knowledge.set("tides", "High tide at the harbour is at 14:10.");
  knowledge.set("ferry", "The ferry to the island leaves at nine.");
  knowledge.set("ferry", "The ferry to the island now leaves at ten.");
  knowledge.set("crane", "The harbour crane is serviced on Mondays.");
  agentsSearchProvider(database, "docs").set("deploys", "Deploys need a manual approval.");
}

describe("migration from agents/context", () => {
  it("on first use of a label, its entries are copied, searchable and counted; the old rows stay", async () => {
    const database = memoryDatabase();
    seed(database);
    const provider = new Fts5SearchProvider(database, { label: "knowledge" });
    expect(await provider.get()).toBe("3 entries indexed.");
    expect(keysOf(await provider.search("when does the ferry leave?"))[0]).toBe("ferry");
    expect(await provider.search("nine")).toBeNull();
    expect(keysOf(await provider.search("who services the crane?"))).toEqual(["crane"]);
    // Copied, not moved: a rollback to agents/context finds its index as it was.
    expect(legacyRows(database, "knowledge").map((row) => row.key)).toEqual(["tides", "ferry", "crane"]);
    // Another label's rows wait for that label's first use.
    expect(legacyRows(database, "docs")).toHaveLength(1);
    const docs = new Fts5SearchProvider(database, { label: "docs" });
    expect(keysOf(await docs.search("how do deploys get approved?"))).toEqual(["deploys"]);
    expect(legacyRows(database, "docs")).toHaveLength(1);
    // The old table stays (another block may still use the old provider).
    expect(database.prepare("SELECT name FROM sqlite_master WHERE name = ?").get(legacyTable)).toBeDefined();
  });

  it("imported entries behave like any other: replace, delete, count", async () => {
    const database = memoryDatabase();
    seed(database);
    const provider = new Fts5SearchProvider(database, { label: "knowledge" });
    await provider.set("tides", "High tide is at 15:02 today.");
    await provider.delete("crane");
    expect(await provider.get()).toBe("2 entries indexed.");
    expect(await provider.search("14:10")).toBeNull();
    expect(keysOf(await provider.search("high tide"))).toEqual(["tides"]);
  });

  it("runs once per label: a reopened provider does not import again", async () => {
    const database = memoryDatabase();
    seed(database);
    expect(await new Fts5SearchProvider(database, { label: "knowledge" }).get()).toBe("3 entries indexed.");
    // A row the old provider writes after the switch is not picked up (the README says: do not run both).
    agentsSearchProvider(database, "knowledge").set("late", "Written by the old provider afterwards.");
    const reopened = new Fts5SearchProvider(database, { label: "knowledge" });
    expect(await reopened.get()).toBe("3 entries indexed.");
    expect(await reopened.search("afterwards")).toBeNull();
  });

  it("when the old table holds a key twice (its set is not atomic), the later row wins", async () => {
    const database = memoryDatabase();
    agentsSearchProvider(database, "knowledge");
    const insert = database.prepare(`INSERT INTO ${legacyTable} (label, key, content) VALUES (?, ?, ?)`);
    insert.run("knowledge", "ferry", "The ferry leaves at nine.");
    insert.run("knowledge", "ferry", "The ferry leaves at ten.");
    const provider = new Fts5SearchProvider(database, { label: "knowledge" });
    expect(await provider.get()).toBe("1 entries indexed.");
    expect(await provider.search("ferry")).toBe("[ferry]\nThe ferry leaves at ten.");
  });

  it("a namespaced provider does not import the old provider's entries, which had no namespace", async () => {
    const database = memoryDatabase();
    seed(database);
    const tenant = new Fts5SearchProvider(database, { label: "knowledge", namespace: "tenant-1" });
    expect(await tenant.get()).toBeNull();
    expect(legacyRows(database, "knowledge")).toHaveLength(3);
    expect(await new Fts5SearchProvider(database, { label: "knowledge" }).get()).toBe("3 entries indexed.");
  });

  it("without an old table there is nothing to import and nothing fails", async () => {
    const database = memoryDatabase();
    const provider = new Fts5SearchProvider(database, { label: "knowledge" });
    expect(await provider.get()).toBeNull();
    expect(
      database.prepare("SELECT name FROM sqlite_master WHERE name = ?").get(legacyTable),
    ).toBeUndefined();
  });

  it("is atomic: when the import fails nothing moves, and the next use imports everything", async () => {
    const database = memoryDatabase();
    seed(database);
    const real = fromBetterSqlite3(database);
    const failing: SqlClient = {
      ...real,
      query: real.query.bind(real),
      run: real.run.bind(real),
      // The import's batch fails at its last statement (the schema's batch goes through untouched).
      batch: (statements) =>
        statements.some((statement) => statement.strings.join("?").includes("legacy_imported = 1"))
          ? real.batch([...statements.slice(0, -1), { strings: ["SELECT * FROM no_such_table"], values: [] }])
          : real.batch(statements),
    };
    const broken = new Fts5SearchProvider(failing, { label: "knowledge" });
    await expect(broken.get()).rejects.toThrow(/no such table: no_such_table/);
    expect(legacyRows(database, "knowledge")).toHaveLength(3);
    expect(database.prepare(`SELECT count(*) AS entries FROM ${indexTable}`).get()).toEqual({ entries: 0 });
    const provider = new Fts5SearchProvider(database, { label: "knowledge" });
    expect(await provider.get()).toBe("3 entries indexed.");
    expect(legacyRows(database, "knowledge")).toHaveLength(3);
  });

  it("the model writing an agents/context title again updates that entry in place (C++ tips, key c-tips)", async () => {
    const database = memoryDatabase();
    // agents/context keys a titled entry by the slug of its title: "C++ tips" is stored as "c-tips".
    agentsSearchProvider(database, "knowledge").set("c-tips", "Prefer std::vector over raw arrays.");
    const provider = new Fts5SearchProvider(database, { label: "knowledge" });
    const context = new ContextBlocks([{ label: "knowledge", provider }]);
    const setContext = context.toolSpecs().find((tool) => tool.name === "set_context");
    if (setContext === undefined) throw new Error("no set_context tool");
    const written = await setContext.execute({
      label: "knowledge",
      content: "Prefer std::span for views of contiguous memory.",
      metadata: { title: "C++ tips" },
    });
    expect(written).toMatchObject({ isError: false, text: expect.stringContaining("Indexed") });
    expect(await provider.get()).toBe("1 entries indexed.");
    expect(await provider.search("vector")).toBeNull();
    expect(await provider.search("span contiguous memory")).toBe(
      "[c-tips]\nPrefer std::span for views of contiguous memory.",
    );
    // Deleting by the key set_context derives from the title removes the copied entry too.
    await provider.delete(entryKey("C++ tips", ""));
    expect(await provider.get()).toBeNull();
    // A title that was never copied keeps its own key: nothing is redirected.
    await setContext.execute({
      label: "knowledge",
      content: "Borrow, do not clone.",
      metadata: { title: "Rust: tips" },
    });
    expect(keysOf(await provider.search("borrow clone"))).toEqual([entryKey("Rust: tips", "")]);
  });

  it("after the documented DROP TABLE of the old table, everything copied is still there", async () => {
    const database = memoryDatabase();
    seed(database);
    expect(await new Fts5SearchProvider(database, { label: "knowledge" }).get()).toBe("3 entries indexed.");
    database.exec(`DROP TABLE ${legacyTable}`);
    const reopened = new Fts5SearchProvider(database, { label: "knowledge" });
    expect(await reopened.get()).toBe("3 entries indexed.");
    expect(keysOf(await reopened.search("when does the ferry leave?"))[0]).toBe("ferry");
    // A label first opened after the drop has nothing to copy and fails nothing.
    expect(await new Fts5SearchProvider(database, { label: "docs" }).get()).toBeNull();
  });
});
