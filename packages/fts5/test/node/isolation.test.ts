import { describe, expect, it } from "vitest";
import { Fts5SearchProvider } from "../../src/index.js";
import { keysOf, memoryDatabase } from "../support/databases.js";

describe("isolation by label and namespace", () => {
  it("one key in several labels and namespaces is several entries, each seen only in its own scope", async () => {
    const database = memoryDatabase();
    const scopes = {
      knowledge: new Fts5SearchProvider(database, { label: "knowledge" }),
      recipes: new Fts5SearchProvider(database, { label: "recipes" }),
      tenantA: new Fts5SearchProvider(database, { label: "knowledge", namespace: "tenant-a" }),
      tenantB: new Fts5SearchProvider(database, { label: "knowledge", namespace: "tenant-b" }),
    };
    for (const [name, provider] of Object.entries(scopes)) {
      await provider.set("shared-key", `The ${name} copy mentions the lighthouse.`);
      await provider.set(`only-${name}`, `Something only ${name} knows about walruses.`);
    }
    for (const [name, provider] of Object.entries(scopes)) {
      expect(await provider.get()).toBe("2 entries indexed.");
      expect(await provider.search("lighthouse")).toBe(
        `[shared-key]\nThe ${name} copy mentions the lighthouse.`,
      );
      expect(keysOf(await provider.search("walruses"))).toEqual([`only-${name}`]);
    }
    await scopes.tenantA.set("shared-key", "Tenant A rewrote it.");
    await scopes.recipes.delete("shared-key");
    expect(await scopes.recipes.get()).toBe("1 entries indexed.");
    expect(await scopes.knowledge.search("lighthouse")).toBe(
      "[shared-key]\nThe knowledge copy mentions the lighthouse.",
    );
    expect(await scopes.tenantB.search("lighthouse")).toBe(
      "[shared-key]\nThe tenantB copy mentions the lighthouse.",
    );
    expect(await scopes.tenantA.search("rewrote")).toBe("[shared-key]\nTenant A rewrote it.");
    expect(await scopes.knowledge.search("rewrote")).toBeNull();
  });

  it("a small scope beside a large one, and the large one beside the small: same isolation", async () => {
    // The search restricts FTS5 to a scope in one of two ways depending on the scope's share of the index
    // (search.ts); both must return only the scope's own entries.
    const database = memoryDatabase();
    const large = new Fts5SearchProvider(database, { label: "large" });
    const small = new Fts5SearchProvider(database, { label: "small" });
    for (let index = 0; index < 60; index++)
      await large.set(`large-${index}`, `Large harbour note ${index}.`);
    await small.set("small-1", "Small harbour note about cranes.");
    await small.set("small-2", "Small note about gulls.");
    expect(keysOf(await small.search("harbour cranes"))).toEqual(["small-1"]);
    const fromLarge = keysOf(await large.search("harbour note cranes"));
    expect(fromLarge).toHaveLength(10);
    expect(fromLarge.every((key) => key.startsWith("large-"))).toBe(true);
  });

  it("init(label) moves a provider to another label", async () => {
    const database = memoryDatabase();
    const provider = new Fts5SearchProvider(database);
    provider.init("first");
    await provider.set("k", "First label entry about herons.");
    provider.init("second");
    expect(await provider.get()).toBeNull();
    expect(await provider.search("herons")).toBeNull();
    provider.init("first");
    expect(await provider.get()).toBe("1 entries indexed.");
  });

  it("a label that looks like SQL or FTS5 syntax is just a label", async () => {
    const database = memoryDatabase();
    const odd = new Fts5SearchProvider(database, { label: `x' OR 1=1; -- "scope : 1" *` });
    const plain = new Fts5SearchProvider(database, { label: "plain" });
    await odd.set("k", "Odd label entry about otters.");
    await plain.set("k", "Plain label entry about otters.");
    expect(await odd.search("otters")).toBe("[k]\nOdd label entry about otters.");
    expect(await plain.search("otters")).toBe("[k]\nPlain label entry about otters.");
  });
});
