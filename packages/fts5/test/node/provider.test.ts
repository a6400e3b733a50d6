import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextError } from "@contextblocks/core";
import { fromBetterSqlite3 } from "@contextblocks/sql";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { indexTable, scopesTable } from "../../src/schema.js";
import { keysOf, memoryDatabase, openProvider } from "../support/databases.js";

describe("get, set, delete and the result format", () => {
  it("get() is null when empty and counts entries once written", async () => {
    const { provider } = openProvider();
    expect(await provider.get()).toBeNull();
    await provider.set("tea", "Green sencha wants water at 75 degrees.");
    expect(await provider.get()).toBe("1 entries indexed.");
    await provider.set("coffee", "Espresso grind setting is 12.");
    expect(await provider.get()).toBe("2 entries indexed.");
  });

  it("set(key) replaces the entry of that key, and delete(key) removes it", async () => {
    const { provider } = openProvider();
    await provider.set("pet", "The office pet is a marmot named Biscuit.");
    await provider.set("pet", "The office pet is an otter named Pebble.");
    expect(await provider.get()).toBe("1 entries indexed.");
    expect(await provider.search("marmot")).toBeNull();
    expect(await provider.search("otter")).toBe("[pet]\nThe office pet is an otter named Pebble.");
    await provider.delete("pet");
    expect(await provider.get()).toBeNull();
    expect(await provider.search("otter")).toBeNull();
    await provider.delete("pet");
    await provider.delete("never-written");
    expect(await provider.get()).toBeNull();
  });

  it("search returns [key], newline, content, matches separated by a blank line, best first", async () => {
    const { provider } = openProvider({ keyOnlyBelow: 0 });
    await provider.set("ferry", "The ferry to the island leaves at nine.");
    await provider.set("winter", "In winter the ferry runs twice a day.\nThe office closes early.");
    await provider.set("tides", "Tides do not concern this query.");
    const result = await provider.search("when does the ferry leave?");
    expect(result).toBe(
      "[ferry]\nThe ferry to the island leaves at nine.\n\n" +
        "[winter]\nIn winter the ferry runs twice a day.\nThe office closes early.",
    );
  });

  it("returns at most `limit` matches (10 by default)", async () => {
    const many = openProvider();
    const few = openProvider({ limit: 3 });
    for (let index = 0; index < 15; index++) {
      await many.provider.set(`note-${index}`, `Harbour note number ${index}.`);
      await few.provider.set(`note-${index}`, `Harbour note number ${index}.`);
    }
    expect(keysOf(await many.provider.search("harbour"))).toHaveLength(10);
    expect(keysOf(await few.provider.search("harbour"))).toHaveLength(3);
  });

  it("stores keys and contents of any shape exactly as given", async () => {
    // Every result with its text (weak matches have their own tests).
    const { provider, database } = openProvider({ keyOnlyBelow: 0 });
    const shapes: [string, string][] = [
      ["", "An entry whose key is the empty string, about zeppelins."],
      ["key with spaces / slashes \\ and 'quotes\" ; DROP TABLE x; --", "Zeppelin quoting check."],
      ["[brackets]", "Zeppelin brackets check."],
      ["ключ-東京-🔑", "Zeppelin unicode key check: ёлка, 東京, emoji 🎈."],
      ["multi\nline\r\nkey", "Zeppelin line\n\nbreaks\r\nkept\ttabs too."],
      ["nul\u0000inside", "Zeppelin with a \u0000 NUL and \u0007 bell."],
      ["empty-content", ""],
    ];
    for (const [key, content] of shapes) await provider.set(key, content);
    const large = `Zeppelin ${"x".repeat(1_048_576)}`;
    await provider.set("large", large);
    expect(await provider.get()).toBe(`${shapes.length + 1} entries indexed.`);
    const stored = database.prepare(`SELECT key, content FROM ${indexTable} ORDER BY rowid`).all() as {
      key: string;
      content: string;
    }[];
    expect(stored.map((row) => [row.key, row.content])).toEqual([...shapes, ["large", large]]);
    const result = await provider.search("zeppelin");
    for (const [key, content] of shapes.slice(0, 6)) expect(result).toContain(`[${key}]\n${content}`);
    // Replacing and deleting by an unusual key finds exactly that key.
    await provider.set("nul\u0000inside", "Replaced.");
    await provider.delete("");
    expect(await provider.get()).toBe(`${shapes.length} entries indexed.`);
    expect(await provider.search("replaced")).toBe("[nul\u0000inside]\nReplaced.");
  });

  it("keys that differ only in case, spacing or Unicode normalisation are different keys", async () => {
    const { provider } = openProvider();
    await provider.set("Note", "Capital zebra.");
    await provider.set("note", "Lower zebra.");
    await provider.set("note ", "Trailing space zebra.");
    await provider.set("caf\u00e9", "Composed zebra.");
    await provider.set("cafe\u0301", "Decomposed zebra.");
    expect(await provider.get()).toBe("5 entries indexed.");
  });
});

describe("input validation", () => {
  it("refuses non-string keys, contents and queries with INVALID_INPUT, and changes nothing", async () => {
    const { provider, database } = openProvider();
    await provider.set("kept", "A kept entry about walruses.");
    const bad: [string, () => Promise<unknown>][] = [
      ["key", () => provider.set(42 as unknown as string, "content")],
      ["key", () => provider.set(null as unknown as string, "content")],
      ["content", () => provider.set("kept", undefined as unknown as string)],
      ["content", () => provider.set("kept", { text: "x" } as unknown as string)],
      ["key", () => provider.delete(7 as unknown as string)],
      ["query", () => provider.search(["walrus"] as unknown as string)],
    ];
    for (const [name, call] of bad) {
      const error = await call().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ContextError);
      expect((error as ContextError).code).toBe("INVALID_INPUT");
      expect((error as ContextError).message).toContain(`${name} must be a string`);
      expect((error as ContextError).message).toContain('"knowledge"');
    }
    expect(await provider.get()).toBe("1 entries indexed.");
    expect(database.prepare(`SELECT key, content FROM ${indexTable}`).all()).toEqual([
      { key: "kept", content: "A kept entry about walruses." },
    ]);
  });

  it("refuses bad options with INVALID_CONFIG", () => {
    const database = memoryDatabase();
    const bad = [
      { limit: 0 },
      { limit: 2.5 },
      { limit: "10" },
      { label: "" },
      { namespace: 3 },
      { searchKeys: "yes" },
    ] as unknown as ConstructorParameters<typeof Fts5SearchProvider>[1][];
    for (const options of bad) {
      expect(() => new Fts5SearchProvider(database, options)).toThrow(ContextError);
    }
    expect(() => new Fts5SearchProvider({} as never)).toThrow(/expected a SqlClient/);
  });

  it("says which call is missing when no label was given", async () => {
    const provider = new Fts5SearchProvider(memoryDatabase());
    await expect(provider.get()).rejects.toThrow(/call init\(label\)/);
    expect(() => provider.init("")).toThrow(ContextError);
    provider.init("knowledge");
    expect(provider.label).toBe("knowledge");
    expect(await provider.get()).toBeNull();
  });
});

describe("call forms", () => {
  const entries = (provider: Fts5SearchProvider) =>
    Promise.all([
      provider.set("lighthouse", "The lighthouse keeper logs every ship."),
      provider.set("ferry", "The ferry leaves at nine."),
    ]);

  it("new AgentSearchProvider(this) with a tagged-template sql, init(label) as ContextBlocks calls it", async () => {
    const database = memoryDatabase();
    const agent = {
      sql(strings: TemplateStringsArray, ...values: unknown[]): unknown[] {
        const statement = database.prepare(strings.join("?"));
        if (statement.reader) return statement.all(...values);
        statement.run(...values);
        return [];
      },
    };
    const provider = new Fts5SearchProvider(agent);
    provider.init("knowledge");
    await entries(provider);
    expect(await provider.get()).toBe("2 entries indexed.");
    expect(keysOf(await provider.search("who keeps the lighthouse?"))).toEqual(["lighthouse"]);
    // The same database through better-sqlite3 directly sees the same entries.
    const direct = new Fts5SearchProvider(database, "knowledge");
    expect(await direct.get()).toBe("2 entries indexed.");
  });

  it("a SqlClient and a better-sqlite3 Database", async () => {
    const database = memoryDatabase();
    const statements: string[] = [];
    const client = fromBetterSqlite3(database, { onStatement: (report) => statements.push(report.text) });
    const provider = new Fts5SearchProvider(client, { label: "knowledge" });
    await entries(provider);
    expect(statements.some((text) => text.includes("contextblocks_search_writes"))).toBe(true);
    expect(await new Fts5SearchProvider(database, { label: "knowledge" }).get()).toBe("2 entries indexed.");
  });
});

describe("durability and the first use", () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it("a reopened file database finds what an earlier process indexed", async () => {
    directory = mkdtempSync(join(tmpdir(), "fts5-"));
    const file = join(directory, "agent.sqlite");
    const first = new Database(file);
    const writer = new Fts5SearchProvider(first, { label: "knowledge" });
    await writer.set("tides", "High tide at the harbour is at 14:10 today.");
    first.close();
    const second = new Database(file);
    const reader = new Fts5SearchProvider(second, { label: "knowledge" });
    expect(await reader.get()).toBe("1 entries indexed.");
    expect(keysOf(await reader.search("when is high tide?"))).toEqual(["tides"]);
    second.close();
  });

  it("creates its schema on first use only, once, even when first uses race", async () => {
    const database = memoryDatabase();
    const tables = () =>
      (database.prepare("SELECT name FROM sqlite_master ORDER BY name").all() as { name: string }[]).map(
        (row) => row.name,
      );
    const provider = new Fts5SearchProvider(database, { label: "knowledge" });
    expect(tables()).toEqual([]);
    await Promise.all([
      provider.set("a", "Alpha entry."),
      provider.set("b", "Bravo entry."),
      provider.get(),
      new Fts5SearchProvider(database, { label: "other" }).set("c", "Charlie entry."),
    ]);
    expect(tables()).toContain(scopesTable);
    expect(await provider.get()).toBe("2 entries indexed.");
    expect(
      database.prepare(`SELECT label, entries FROM ${scopesTable} ORDER BY label`).all() as unknown[],
    ).toEqual([
      { label: "knowledge", entries: 2 },
      { label: "other", entries: 1 },
    ]);
  });

  it("concurrent sets of different keys all land; of one key, one value wins whole", async () => {
    const { provider } = openProvider();
    const words = ["alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    await Promise.all(words.map((word) => provider.set(`kb-${word}`, `Radio word ${word}.`)));
    expect(await provider.get()).toBe("8 entries indexed.");
    await Promise.all(words.map((word) => provider.set("kb-radio", `Radio word ${word}.`)));
    expect(await provider.get()).toBe("9 entries indexed.");
    const result = await provider.search("radio word");
    const radio = result?.split("\n\n").filter((block) => block.startsWith("[kb-radio]")) ?? [];
    expect(radio).toHaveLength(1);
  });
});

describe("behind ContextBlocks (the README example)", () => {
  it("renders as a searchable block with its count, and its entries are found by a question", async () => {
    const { ContextBlocks } = await import("@contextblocks/core");
    const database = memoryDatabase();
    const agent = {
      sql(strings: TemplateStringsArray, ...values: unknown[]): unknown[] {
        const statement = database.prepare(strings.join("?"));
        if (statement.reader) return statement.all(...values);
        statement.run(...values);
        return [];
      },
    };
    const context = new ContextBlocks([
      { label: "knowledge", description: "Facts and notes", provider: new Fts5SearchProvider(agent) },
    ]);
    await context.setEntry("knowledge", "user-breakfast", "Dani has overnight oats with blueberries.");
    expect(await context.search("knowledge", "What does Dani eat in the morning?")).toBe(
      "[user-breakfast]\nDani has overnight oats with blueberries.",
    );
    const prompt = await context.freezeSystemPrompt();
    expect(prompt).toContain("KNOWLEDGE (Facts and notes) [searchable]");
    expect(prompt).toContain("1 entries indexed.");
  });
});
