import { ContextError } from "@contextblocks/core";
import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { indexCopyTable, indexTable } from "../../src/schema.js";
import { keysOf, memoryDatabase } from "../support/databases.js";
import { createEarlierLayout, indexRows, writeEarlierEntry } from "../support/earlier-layout.js";

/**
 * A database written by the provider's earlier layout (an index without the `context` column) is copied over
 * to the current layout on first use: once, losing nothing, and all-or-nothing.
 */

const entries: [string, string][] = [
  ["ferry", "The ferry to the island leaves at nine."],
  ["crane", "The harbour crane is serviced every March by Jansen & Zn."],
  ["emoji", "Tides 🌊 and\nnew lines\tand tabs, kept as they are."],
  ["long", `${"A long entry about the lighthouse keeper's logbook. ".repeat(20)}The end.`],
];

function earlierDatabase(): Database.Database {
  const database = memoryDatabase();
  createEarlierLayout(database);
  for (const [key, content] of entries) {
    writeEarlierEntry(database, { namespace: "", label: "knowledge" }, key, content);
  }
  writeEarlierEntry(database, { namespace: "tenant-1", label: "knowledge" }, "ferry", "Tenant ferry at ten.");
  writeEarlierEntry(database, { namespace: "", label: "docs" }, "deploys", "Deploys need two approvals.");
  return database;
}

function columns(database: Database.Database): string[] {
  return (
    database.prepare(`SELECT name FROM pragma_table_info('${indexTable}')`).all() as { name: string }[]
  ).map((row) => row.name);
}

function tableExists(database: Database.Database, name: string): boolean {
  return database.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(name) !== undefined;
}

describe("upgrading a database of the earlier layout", () => {
  it("copies every entry over once: byte-identical, searchable, counted, in every scope", async () => {
    const database = earlierDatabase();
    const before = indexRows(database);
    expect(columns(database)).not.toContain("context");
    const statements: string[] = [];
    const provider = new Fts5SearchProvider(database, {
      label: "knowledge",
      onStatement: ({ text }) => statements.push(text),
    });
    expect(await provider.get()).toBe("4 entries indexed.");
    expect(columns(database)).toContain("context");
    expect(tableExists(database, indexCopyTable)).toBe(false);
    // Same rowids, scopes, handles, keys and contents, byte for byte.
    expect(indexRows(database)).toEqual(before);
    expect(keysOf(await provider.search("when does the ferry leave?"))[0]).toBe("ferry");
    expect(await provider.search("emoji")).toBe(`[emoji]\n${entries[2]?.[1]}`);
    expect(await provider.search("[long]")).toBe(`[long]\n${entries[3]?.[1]}`);
    const tenant = new Fts5SearchProvider(database, { label: "knowledge", namespace: "tenant-1" });
    expect(await tenant.search("ferry")).toBe("[ferry]\nTenant ferry at ten.");
    const docs = new Fts5SearchProvider(database, { label: "docs" });
    expect(keysOf(await docs.search("how are deploys approved?"))).toEqual(["deploys"]);
    // Writes and deletes work on the copied entries, through the new triggers.
    await provider.set("crane", "The crane is serviced in April now.", { context: "Harbour equipment" });
    await provider.delete("ferry");
    expect(await provider.get()).toBe("3 entries indexed.");
    expect(keysOf(await provider.search("harbour equipment"))).toEqual(["crane"]);
    // Ran once: a provider opened later finds the layout and copies nothing.
    const copies = statements.filter((text) => text.includes(indexCopyTable)).length;
    expect(copies).toBeGreaterThan(0);
    const later: string[] = [];
    const reopened = new Fts5SearchProvider(database, {
      label: "knowledge",
      onStatement: ({ text }) => later.push(text),
    });
    expect(await reopened.get()).toBe("3 entries indexed.");
    expect(later.some((text) => text.includes(indexCopyTable) || text.includes("sqlite_master"))).toBe(false);
  });

  it("is all-or-nothing: a statement failing midway leaves the earlier layout intact, and a retry completes", async () => {
    const database = earlierDatabase();
    const before = indexRows(database);
    let failAt: string | undefined = `ALTER TABLE ${indexCopyTable} RENAME`;
    // A real better-sqlite3 client; the failure is thrown after the rename ran, inside the upgrade's transaction.
    const provider = new Fts5SearchProvider(database, {
      label: "knowledge",
      onStatement: ({ text }) => {
        if (failAt !== undefined && text.includes(failAt)) throw new Error("injected failure");
      },
    });
    await expect(provider.search("ferry")).rejects.toThrow("injected failure");
    expect(columns(database)).not.toContain("context");
    expect(tableExists(database, indexCopyTable)).toBe(false);
    expect(tableExists(database, "contextblocks_search_writes")).toBe(true);
    expect(indexRows(database)).toEqual(before);
    failAt = undefined;
    expect(keysOf(await provider.search("ferry"))).toEqual(["ferry"]);
    expect(indexRows(database)).toEqual(before);
    expect(await provider.get()).toBe("4 entries indexed.");
  });

  it("on a source whose batch is not atomic, a failure at any statement loses nothing and the next use finishes", async () => {
    // Count the upgrade's statements once, then fail at each of them in turn.
    const count = await upgradeStatements();
    expect(count).toBeGreaterThan(5);
    let midSwap = 0;
    // Statement 0 is the scope read, which fails by itself (no layout view) and starts the upgrade.
    for (let failing = 1; failing < count; failing++) {
      const database = earlierDatabase();
      const before = indexRows(database);
      const source = taggedTemplateSource(database, failing);
      const provider = new Fts5SearchProvider(source, { label: "knowledge" });
      await expect(provider.get(), `failing at statement ${failing}`).rejects.toThrow("injected failure");
      // Nothing is lost: the rows are in the earlier index, or in the complete copy.
      if (!tableExists(database, indexTable)) midSwap++;
      const kept = tableExists(database, indexTable)
        ? indexRows(database)
        : database
            .prepare(`SELECT rowid, scope, handle, key, content FROM ${indexCopyTable} ORDER BY rowid`)
            .all();
      expect(kept, `failing at statement ${failing}`).toEqual(before);
      source.failAt = undefined;
      expect(await provider.get()).toBe("4 entries indexed.");
      expect(indexRows(database)).toEqual(before);
      expect(keysOf(await provider.search("who services the crane?"))).toEqual(["crane"]);
      await provider.set("new", "A note written after the upgrade.", { context: "Breakwater" });
      expect(keysOf(await provider.search("breakwater"))).toEqual(["new"]);
    }
    // One of the failures came between dropping the earlier index and renaming the copy.
    expect(midSwap).toBeGreaterThan(0);
  });

  it("refuses a context that is not a string, with a ContextError naming it", async () => {
    const provider = new Fts5SearchProvider(earlierDatabase(), { label: "knowledge" });
    await expect(provider.set("x", "y", { context: 5 as unknown as string })).rejects.toThrow(ContextError);
    await expect(provider.set("x", "y", { context: 5 as unknown as string })).rejects.toThrow(
      /options\.context must be a string/,
    );
  });
});

/** A tagged-template `sql` source over better-sqlite3 without `ctx.storage`: its batch is not atomic. */
function taggedTemplateSource(database: Database.Database, failAt?: number) {
  let executed = 0;
  const source = {
    failAt,
    sql(strings: TemplateStringsArray, ...values: unknown[]): unknown[] {
      const index = executed++;
      const rows = execute(database, strings, values);
      if (source.failAt !== undefined && index === source.failAt) throw new Error("injected failure");
      return rows;
    },
  };
  return source;
}

/** How many statements opening an earlier-layout database runs, up to and with `get()`'s count. */
async function upgradeStatements(): Promise<number> {
  const database = earlierDatabase();
  let statements = 0;
  const counting = {
    sql(strings: TemplateStringsArray, ...values: unknown[]): unknown[] {
      statements++;
      return execute(database, strings, values);
    },
  };
  await new Fts5SearchProvider(counting, { label: "knowledge" }).get();
  return statements;
}

/** One statement of a tagged-template call on better-sqlite3: its rows, or none for a write. */
function execute(database: Database.Database, strings: TemplateStringsArray, values: unknown[]): unknown[] {
  const prepared = database.prepare(strings.join("?"));
  if (prepared.reader) return prepared.all(...values);
  prepared.run(...values);
  return [];
}
