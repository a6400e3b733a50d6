import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { legacyTable } from "../../src/schema.js";
import { keysOf } from "../support/databases.js";
import { createEarlierLayout, writeEarlierEntry } from "../support/earlier-layout.js";

// A read on a database opened read-only (a replica, a dashboard's handle): it answers from the provider's
// tables, finds nothing where there are none, and where its first use must bring entries over (agents/context's,
// or an index of an earlier layout) it is refused by name, as the SQLite session store refuses it.

let directory: string | undefined;
const opened: Database.Database[] = [];
afterEach(() => {
  for (const database of opened.splice(0)) database.close();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

function fileDatabase(): { path: string; writer: Database.Database; reader: () => Database.Database } {
  directory = mkdtempSync(join(tmpdir(), "fts5-read-only-"));
  const path = join(directory, "context.db");
  const writer = new Database(path);
  opened.push(writer);
  return {
    path,
    writer,
    reader: () => {
      const reader = new Database(path, { readonly: true });
      opened.push(reader);
      return reader;
    },
  };
}

describe("a provider on a database that only reads", () => {
  it("searches the entries a writer stored, and finds nothing where nothing was written", async () => {
    const { writer, reader } = fileDatabase();
    await new Fts5SearchProvider(writer, { label: "knowledge" }).set("tides", "High tide at 14:10.");
    const provider = new Fts5SearchProvider(reader(), { label: "knowledge" });
    expect(keysOf(await provider.search("tide"))).toEqual(["tides"]);
    expect(await new Fts5SearchProvider(reader(), { label: "other" }).search("tide")).toBeNull();
  });

  it("holding agents/context's entries not brought over yet: refused by name, found once a writer has", async () => {
    const { writer, reader } = fileDatabase();
    // As agents/context's AgentSearchProvider writes them.
    writer.exec(`CREATE VIRTUAL TABLE ${legacyTable} USING fts5(label UNINDEXED, key UNINDEXED, content,
      tokenize='porter unicode61')`);
    writer
      .prepare(`INSERT INTO ${legacyTable} (label, key, content) VALUES (?, ?, ?)`)
      .run("knowledge", "tides", "High tide at 14:10.");
    const provider = new Fts5SearchProvider(reader(), { label: "knowledge" });
    const refusal = {
      code: "READONLY",
      message: expect.stringContaining('Fts5SearchProvider "knowledge"'),
      cause: expect.objectContaining({ code: "SQLITE_READONLY" }),
    };
    await expect(provider.search("tide")).rejects.toMatchObject(refusal);
    await expect(provider.get()).rejects.toMatchObject(refusal);
    expect(await new Fts5SearchProvider(writer, { label: "knowledge" }).get()).toBe("1 entries indexed.");
    expect(keysOf(await provider.search("tide"))).toEqual(["tides"]);
  });

  it("of this provider's earlier layout: refused by name, found once a writer has upgraded it", async () => {
    const { writer, reader } = fileDatabase();
    createEarlierLayout(writer);
    writeEarlierEntry(writer, { namespace: "", label: "knowledge" }, "ferry", "The ferry leaves at nine.");
    const provider = new Fts5SearchProvider(reader(), { label: "knowledge" });
    await expect(provider.search("ferry")).rejects.toMatchObject({
      code: "READONLY",
      message: expect.stringContaining("open it writable once"),
    });
    expect(keysOf(await new Fts5SearchProvider(writer, { label: "knowledge" }).search("ferry"))).toEqual([
      "ferry",
    ]);
    expect(keysOf(await provider.search("ferry"))).toEqual(["ferry"]);
  });
});
