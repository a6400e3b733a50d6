import { ContextError } from "@contextblocks/core";
import { writtenText } from "@contextblocks/text";
import { describe, expect, it } from "vitest";
import { ADVERSARIAL_TEXTS } from "../../../conformance/src/adversarial.js";
import { Fts5SearchProvider } from "../../src/index.js";
import { indexTable } from "../../src/schema.js";
import { memoryDatabase, openProvider } from "../support/databases.js";

async function refusal(promise: Promise<unknown>): Promise<ContextError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ContextError);
  return error as ContextError;
}

function storedRows(database: ReturnType<typeof memoryDatabase>): { key: string; content: string }[] {
  return database.prepare(`SELECT key, content FROM ${indexTable} ORDER BY rowid`).all() as {
    key: string;
    content: string;
  }[];
}

describe("lone UTF-16 surrogates (issue 12, item 8)", () => {
  it("refuses a key with a lone surrogate with INVALID_INPUT naming the key, before opening the database", async () => {
    const { provider, database } = openProvider();
    for (const key of ["x\ud800", "x\udbff", "\udc00x", "a\udfff\ud800b"]) {
      const error = await refusal(provider.set(key, "Some content."));
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toMatch(/set: key has a lone UTF-16 surrogate at index \d+/);
    }
    // Nothing was written: not even the schema was created.
    expect(database.prepare("SELECT count(*) AS tables FROM sqlite_master").get()).toEqual({ tables: 0 });
  });

  it("two keys that SQLite would store as one visible key are both refused; stored entries stay as they were", async () => {
    const { provider, database } = openProvider();
    await provider.set("x", "Original content about walruses.");
    expect((await refusal(provider.set("x\ud800", "First."))).code).toBe("INVALID_INPUT");
    expect((await refusal(provider.set("x\udbff", "Second."))).code).toBe("INVALID_INPUT");
    const content = await refusal(provider.set("x", "Walruses \ud83d then nothing."));
    expect(content.code).toBe("INVALID_INPUT");
    expect(content.message).toContain("set: content has a lone UTF-16 surrogate at index 9");
    const deletion = await refusal(provider.delete("x\udc00"));
    expect(deletion.message).toContain("delete: key has a lone UTF-16 surrogate");
    expect(storedRows(database)).toEqual([{ key: "x", content: "Original content about walruses." }]);
    expect(await provider.get()).toBe("1 entries indexed.");
    expect(await provider.search("walruses")).toBe("[x]\nOriginal content about walruses.");
  });

  it("refuses a label or namespace with a lone surrogate with INVALID_CONFIG", () => {
    const database = memoryDatabase();
    expect(() => new Fts5SearchProvider(database, { label: "notes\ud800" })).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        message: expect.stringContaining("label has a lone"),
      }),
    );
    expect(() => new Fts5SearchProvider(database, { label: "notes", namespace: "\udc00" })).toThrow(
      expect.objectContaining({
        code: "INVALID_CONFIG",
        message: expect.stringContaining("namespace has a lone"),
      }),
    );
    const provider = new Fts5SearchProvider(database);
    expect(() => provider.init("\ud800")).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });

  it("stores every well-formed adversarial text exactly, as key and as content, and refuses the others", async () => {
    const { provider, database } = openProvider();
    const expected: { key: string; content: string }[] = [];
    for (const entry of ADVERSARIAL_TEXTS) {
      const key = entry.text.slice(0, 200);
      if (entry.wellFormed) {
        await provider.set(key, entry.text);
        const existing = expected.findIndex((row) => row.key === key);
        if (existing === -1) expected.push({ key, content: entry.text });
        else expected[existing] = { key, content: entry.text };
      } else {
        expect((await refusal(provider.set("ok", entry.text))).code, entry.name).toBe("INVALID_INPUT");
        expect((await refusal(provider.set(entry.text, "ok"))).code, entry.name).toBe("INVALID_INPUT");
      }
    }
    const stored = storedRows(database);
    expect(stored.length).toBe(expected.length);
    // A row holds the words in a compatibility form after the content (`searchableText`), read back without them.
    const byKey = new Map(stored.map((row) => [row.key, writtenText(row.content)]));
    for (const row of expected) expect(byKey.get(row.key) === row.content, row.key.slice(0, 40)).toBe(true);
  }, 60_000);
});
