import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { blockKindOf } from "../src/capabilities.js";
import { ContextBlocks } from "../src/index.js";
import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
  InMemoryStore,
} from "../src/memory/index.js";
import { rank, stem, terms } from "../src/memory/text-search.js";

describe("the memory subpath", () => {
  it("is exported as @contextblocks/core/memory, apart from the main entry", async () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      exports: Record<string, unknown>;
    };
    expect(manifest.exports["./memory"]).toEqual({
      types: "./dist/memory/index.d.ts",
      default: "./dist/memory/index.js",
    });
    const main = await import("../src/index.js");
    expect(Object.keys(main)).not.toContain("InMemoryContextProvider");
  });

  it("each provider has the shape of its kind", () => {
    expect(blockKindOf(new InMemoryContextProvider())).toBe("writable");
    expect(blockKindOf(new InMemorySearchProvider())).toBe("searchable");
    expect(blockKindOf(new InMemorySkillProvider())).toBe("loadable");
  });
});

describe("InMemoryContextProvider", () => {
  it("get is null until set, then the content", async () => {
    const provider = new InMemoryContextProvider();
    expect(await provider.get()).toBeNull();
    await provider.set("hello");
    expect(await provider.get()).toBe("hello");
    await provider.set("");
    expect(await provider.get()).toBe("");
  });

  it("keeps one value per label in a shared store, named by init(label) or the constructor", async () => {
    const store = new InMemoryStore();
    const first = new InMemoryContextProvider({ store });
    first.init("memory");
    const second = new InMemoryContextProvider({ store, label: "notes" });
    second.init("ignored");
    await first.set("m");
    await second.set("n");
    expect(store.blocks).toEqual(
      new Map([
        ["memory", "m"],
        ["notes", "n"],
      ]),
    );
    const restarted = new InMemoryContextProvider({ store });
    restarted.init("memory");
    expect(await restarted.get()).toBe("m");
  });

  it("an initial value is planted once and does not overwrite a stored one", async () => {
    const store = new InMemoryStore();
    const provider = new InMemoryContextProvider({ store, initial: "seed" });
    provider.init("memory");
    expect(await provider.get()).toBe("seed");
    await provider.set("written");
    const restarted = new InMemoryContextProvider({ store, label: "memory", initial: "seed" });
    expect(await restarted.get()).toBe("written");
  });

  it("refuses non-string content", async () => {
    await expect(new InMemoryContextProvider().set(5 as unknown as string)).rejects.toThrow(
      /content must be a string/,
    );
  });

  it("serves a ContextBlocks through defaultProvider across a restart", async () => {
    const store = new InMemoryStore();
    const make = () =>
      new ContextBlocks(
        [{ label: "memory", description: "Learned facts", maxTokens: 2_000 }],
        new InMemoryContextProvider({ store }),
        (label) => new InMemoryContextProvider({ store, label }),
      );
    const first = make();
    await first.setBlock("memory", "Has a cat named Miso.");
    const second = make();
    expect(await second.freezeSystemPrompt()).toContain("Has a cat named Miso.");
  });
});

describe("InMemorySearchProvider", () => {
  async function indexed() {
    const provider = new InMemorySearchProvider({ label: "knowledge" });
    await provider.set("breakfast", "The user eats porridge with blueberries every morning.");
    await provider.set("running", "She runs ten kilometres on Sundays and is training for a marathon.");
    await provider.set("stories", "Her daughter loves bedtime stories about dragons.");
    await provider.set("office", "The office is in Lisbon, near the river, and the team meets on Tuesdays.");
    await provider.set("allergy", "Allergic to peanuts: never suggest satay or peanut butter.");
    return provider;
  }

  it("get is a count of entries, or null when empty", async () => {
    const provider = new InMemorySearchProvider();
    expect(await provider.get()).toBeNull();
    await provider.set("a", "x");
    await provider.set("b", "y");
    await provider.set("a", "z");
    expect(await provider.get()).toBe("2 entries indexed.");
  });

  it("returns ranked matches as [key] and content, or null", async () => {
    const provider = await indexed();
    expect(await provider.search("porridge")).toBe(
      "[breakfast]\nThe user eats porridge with blueberries every morning.",
    );
    expect(await provider.search("volcano")).toBeNull();
  });

  it("answers natural-language questions whose words are not all in the entry", async () => {
    const provider = await indexed();
    expect(await provider.search("What does the user eat for breakfast in the morning?")).toMatch(
      /^\[breakfast\]/,
    );
    expect(await provider.search("Where is the office?")).toMatch(/^\[office\]/);
    expect(await provider.search("Is she allergic to anything?")).toMatch(/^\[allergy\]/);
  });

  it("stems: running, runs and run meet; story and stories meet", async () => {
    const provider = await indexed();
    expect(await provider.search("running")).toMatch(/^\[running\]/);
    expect(await provider.search("run")).toMatch(/^\[running\]/);
    expect(await provider.search("trained")).toMatch(/^\[running\]/);
    expect(await provider.search("story")).toMatch(/^\[stories\]/);
    expect(await provider.search("meeting")).toMatch(/^\[office\]/);
    expect(stem("running")).toBe(stem("runs"));
    expect(stem("stories")).toBe(stem("story"));
    expect(stem("trained")).toBe(stem("training"));
  });

  it("treats operator characters in a query as text, never syntax", async () => {
    const provider = await indexed();
    for (const query of [
      '"unbalanced',
      "porridge AND NOT",
      "NEAR(porridge)",
      "*",
      "porridge*",
      "-porridge",
      "(",
      "^",
    ]) {
      const result = await provider.search(query);
      expect(result === null || typeof result === "string").toBe(true);
    }
    expect(await provider.search('"porridge"')).toMatch(/^\[breakfast\]/);
    expect(await provider.search("*")).toBeNull();
  });

  it("ranks the entry with more matching words first and caps the number of results", async () => {
    const provider = new InMemorySearchProvider({ limit: 2 });
    await provider.set("one", "tea");
    await provider.set("two", "green tea");
    await provider.set("three", "green tea from Japan");
    await provider.set("four", "coffee");
    const result = await provider.search("green tea Japan");
    expect(result?.split("\n\n").map((match) => match.split("\n")[0])).toEqual(["[three]", "[two]"]);
  });

  it("an exact phrase ranks first", () => {
    const documents = [
      { key: "scattered", content: "bank holiday by the river, then the bank of the river" },
      { key: "phrase", content: "we walked along the river bank" },
    ];
    expect(rank(documents, "river bank", 10)[0]?.key).toBe("phrase");
  });

  it("keeps labels apart in a shared store", async () => {
    const store = new InMemoryStore();
    const docs = new InMemorySearchProvider({ store, label: "docs" });
    const notes = new InMemorySearchProvider({ store });
    notes.init("notes");
    await docs.set("a", "alpha in docs");
    await notes.set("b", "alpha in notes");
    expect(await docs.search("alpha")).toBe("[a]\nalpha in docs");
    expect(await notes.search("alpha")).toBe("[b]\nalpha in notes");
  });

  it("delete removes one entry", async () => {
    const provider = await indexed();
    await provider.delete("breakfast");
    expect(await provider.search("porridge")).toBeNull();
    expect(await provider.get()).toBe("4 entries indexed.");
  });

  it("drops stop words and lower-cases", () => {
    expect(terms("What is THE Answer?")).toEqual(["answer"]);
  });
});

describe("InMemorySkillProvider", () => {
  it("lists skills as - key: description and loads one in full", async () => {
    const provider = new InMemorySkillProvider({
      label: "skills",
      skills: {
        deploy: { content: "Run wrangler deploy.", description: "Deploy the worker" },
        plain: { content: "No description." },
      },
    });
    expect(await provider.get()).toBe("- deploy: Deploy the worker\n- plain");
    expect(await provider.load("deploy")).toBe("Run wrangler deploy.");
    expect(await provider.load("missing")).toBeNull();
  });

  it("get is null with no skills", async () => {
    expect(await new InMemorySkillProvider().get()).toBeNull();
  });

  it("set keeps the previous description when none is given, and delete removes", async () => {
    const provider = new InMemorySkillProvider();
    provider.init("skills");
    await provider.set("test", "pnpm test", "Run the tests");
    await provider.set("test", "pnpm test --run");
    expect(await provider.get()).toBe("- test: Run the tests");
    expect(await provider.load("test")).toBe("pnpm test --run");
    await provider.delete("test");
    expect(await provider.get()).toBeNull();
  });

  it("seeds skills on init without overwriting ones already in a shared store", async () => {
    const store = new InMemoryStore();
    const first = new InMemorySkillProvider({ store, skills: { deploy: { content: "v1" } } });
    first.init("skills");
    await first.set("deploy", "v2");
    const restarted = new InMemorySkillProvider({ store, skills: { deploy: { content: "v1" } } });
    restarted.init("skills");
    expect(await restarted.load("deploy")).toBe("v2");
  });

  it("renders as a loadable block and works with load_context", async () => {
    const context = new ContextBlocks([
      {
        label: "skills",
        provider: new InMemorySkillProvider({
          skills: { deploy: { content: "Run wrangler deploy.", description: "Deploy" } },
        }),
      },
    ]);
    expect(await context.freezeSystemPrompt()).toContain(
      "SKILLS [loadable]\n══════════════════════════════════════════════\n- deploy: Deploy",
    );
    const load = context.toolSpecs().find((spec) => spec.name === "load_context");
    expect(await load?.execute({ label: "skills", key: "deploy" })).toEqual({
      isError: false,
      text: "Run wrangler deploy.",
    });
  });
});
