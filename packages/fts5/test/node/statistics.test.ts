import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { indexDataTable } from "../../src/schema.js";
import { leadingVarint } from "../../src/scope-share.js";
import { memoryDatabase } from "../support/databases.js";

describe("index size for document frequencies", () => {
  it("decodes SQLite varints", () => {
    expect(leadingVarint(new Uint8Array([]))).toBe(0);
    expect(leadingVarint(new Uint8Array([0x05, 0x99]))).toBe(5);
    expect(leadingVarint(new Uint8Array([0x81, 0x00]))).toBe(128);
    expect(leadingVarint(new Uint8Array([0x86, 0x8d, 0x20]))).toBe(100_000);
    expect(leadingVarint(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]))).toBe(
      2 ** 64 - 255,
    );
    expect(leadingVarint(new Uint8Array([0x86, 0x8d, 0x20]).buffer)).toBe(100_000);
    expect(leadingVarint("not a blob")).toBeUndefined();
    expect(leadingVarint(null)).toBeUndefined();
  });

  it("reads FTS5's own entry count: all labels, after inserts, replaces and deletes", async () => {
    const database = memoryDatabase();
    const first = new Fts5SearchProvider(database, { label: "first" });
    const second = new Fts5SearchProvider(database, { label: "second" });
    const count = () => {
      const row = database.prepare(`SELECT block FROM ${indexDataTable} WHERE id = 1`).get() as {
        block: Uint8Array;
      };
      return leadingVarint(row.block);
    };
    // A read of a new database finds nothing and makes no table; the first write makes them.
    expect(await first.get()).toBeNull();
    expect(database.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").all(indexDataTable)).toEqual([]);
    await first.set("k0", "Entry 0.");
    await first.delete("k0");
    expect(count()).toBe(0);
    for (let index = 0; index < 300; index++) await first.set(`k${index}`, `Entry ${index}.`);
    await second.set("k", "Other label.");
    await first.set("k1", "Replaced.");
    await first.delete("k2");
    expect(count()).toBe(300);
  });
});
