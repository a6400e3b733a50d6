import { describe, expect, it } from "vitest";
import { ContextBlocks, ContextError, type ContextErrorCode } from "../src/index.js";
import { InMemorySearchProvider, InMemorySkillProvider, InMemoryStore } from "../src/memory/index.js";
import {
  FailingProvider,
  KeyedSearchProvider,
  KeyedSkillProvider,
  RecordingProvider,
  readonlyProvider,
  rejection,
} from "./helpers.js";

const tokenCounter = (text: string) => text.length;

function setup() {
  const memory = new RecordingProvider("Likes tea.");
  const limited = new RecordingProvider(null);
  const knowledge = new KeyedSearchProvider();
  const skills = new KeyedSkillProvider();
  const readonlySearch = { get: async () => null, search: async () => null };
  const context = new ContextBlocks(
    [
      { label: "soul", provider: readonlyProvider("Be kind.") },
      { label: "memory", provider: memory },
      { label: "limited", maxTokens: 10, provider: limited },
      { label: "knowledge", maxTokens: 20, provider: knowledge },
      { label: "skills", provider: skills },
      { label: "archive", provider: readonlySearch },
    ],
    null,
    null,
    { tokenCounter },
  );
  return { context, memory, limited, knowledge, skills };
}

async function expectCode(
  promise: Promise<unknown>,
  code: ContextErrorCode,
  label?: string,
): Promise<ContextError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(ContextError);
  expect((error as ContextError).code).toBe(code);
  if (label !== undefined) {
    expect((error as ContextError).label).toBe(label);
    expect((error as ContextError).message).toContain(`"${label}"`);
  }
  return error as ContextError;
}

describe("setBlock", () => {
  it("replaces the content in the provider and in memory, and returns the block", async () => {
    const { context, memory } = setup();
    const block = await context.setBlock("memory", "Likes coffee.");
    expect(memory.value).toBe("Likes coffee.");
    expect(block).toMatchObject({ label: "memory", content: "Likes coffee.", tokens: 13, kind: "writable" });
    expect(context.getBlock("memory")?.content).toBe("Likes coffee.");
  });

  it("accepts an empty string", async () => {
    const { context, memory } = setup();
    await context.setBlock("memory", "");
    expect(memory.value).toBe("");
  });

  it("enforces maxTokens, naming the block, the estimate and the limit", async () => {
    const { context, limited } = setup();
    await context.setBlock("limited", "0123456789");
    const error = await expectCode(context.setBlock("limited", "01234567890"), "MAX_TOKENS", "limited");
    expect(error.message).toContain("11");
    expect(error.message).toContain("10");
    expect(error.message).toMatch(/Block "limited" exceeds maxTokens: 11 > 10 \(estimated tokens\)/);
    expect(limited.value).toBe("0123456789");
    expect(limited.writes).toEqual(["0123456789"]);
  });

  it("refuses a read-only block with READONLY", async () => {
    const { context } = setup();
    const error = await expectCode(context.setBlock("soul", "Be rude."), "READONLY", "soul");
    expect(error.message).toMatch(/read-only|readonly/);
  });

  it('refuses an unknown label with NOT_FOUND, saying "not found" and not "read-only"', async () => {
    const { context } = setup();
    const error = await expectCode(context.setBlock("nope", "x"), "NOT_FOUND", "nope");
    expect(error.message).toContain("not found");
    expect(error.message).not.toMatch(/read-?only/i);
    await expectCode(context.appendToBlock("nope", "x"), "NOT_FOUND", "nope");
    await expectCode(context.setEntry("nope", "k", "x"), "NOT_FOUND", "nope");
    await expectCode(context.search("nope", "x"), "NOT_FOUND", "nope");
    await expectCode(context.loadEntry("nope", "x"), "NOT_FOUND", "nope");
  });

  it("refuses a whole-block write to a keyed block with KEYED_BLOCK", async () => {
    const { context, knowledge, skills } = setup();
    const error = await expectCode(context.setBlock("knowledge", "everything"), "KEYED_BLOCK", "knowledge");
    expect(error.message).toContain("setEntry");
    await expectCode(context.appendToBlock("knowledge", "more"), "KEYED_BLOCK", "knowledge");
    await expectCode(context.setBlock("skills", "everything"), "KEYED_BLOCK", "skills");
    await expectCode(context.setBlock("archive", "everything"), "KEYED_BLOCK", "archive");
    expect(knowledge.set).not.toHaveBeenCalled();
    expect(skills.set).not.toHaveBeenCalled();
  });

  it("refuses non-string content with INVALID_INPUT", async () => {
    const { context, memory } = setup();
    for (const content of [undefined, null, 5, { text: "x" }, ["x"]]) {
      await expectCode(context.setBlock("memory", content as unknown as string), "INVALID_INPUT", "memory");
      await expectCode(
        context.appendToBlock("memory", content as unknown as string),
        "INVALID_INPUT",
        "memory",
      );
    }
    expect(memory.set).not.toHaveBeenCalled();
  });
});

describe("appendToBlock", () => {
  it.each([
    ["adds a newline between old and new text", "Likes tea.", "Has a cat.", "Likes tea.\nHas a cat."],
    ["adds nothing to an empty block", "", "First fact.", "First fact."],
    [
      "adds nothing when the block ends with a newline",
      "Likes tea.\n",
      "Has a cat.",
      "Likes tea.\nHas a cat.",
    ],
    [
      "adds nothing when the new text starts with a newline",
      "Likes tea.",
      "\nHas a cat.",
      "Likes tea.\nHas a cat.",
    ],
  ])("%s", async (_name, before, added, after) => {
    const memory = new RecordingProvider(before);
    const context = new ContextBlocks([{ label: "memory", provider: memory }]);
    const block = await context.appendToBlock("memory", added);
    expect(memory.value).toBe(after);
    expect(block.content).toBe(after);
  });

  it("reads the block from its provider when it was not read yet", async () => {
    const memory = new RecordingProvider("stored");
    const context = new ContextBlocks([{ label: "memory", provider: memory }]);
    await context.appendToBlock("memory", "added");
    expect(memory.value).toBe("stored\nadded");
    expect(memory.get).toHaveBeenCalledTimes(1);
  });

  it("enforces maxTokens on the combined content", async () => {
    const { context, limited } = setup();
    await context.setBlock("limited", "12345");
    const error = await expectCode(context.appendToBlock("limited", "67890"), "MAX_TOKENS", "limited");
    // "12345" + "\n" + "67890" is 11 characters.
    expect(error.message).toMatch(/Block "limited" exceeds maxTokens: 11 > 10 \(estimated tokens\)/);
    expect(limited.value).toBe("12345");
    expect(context.getBlock("limited")?.content).toBe("12345");
    await context.appendToBlock("limited", "678");
    expect(limited.value).toBe("12345\n678");
  });
});

describe("keyed entries: setEntry, deleteEntry, search, loadEntry", () => {
  it("writes one entry to a searchable block and re-reads its summary", async () => {
    const { context, knowledge } = setup();
    const block = await context.setEntry("knowledge", "tea", "Green tea, no sugar.");
    expect(knowledge.entries.get("tea")).toBe("Green tea, no sugar.");
    expect(block.content).toBe("1 entries indexed.");
    expect(await context.search("knowledge", "Green")).toBe("[tea]\nGreen tea, no sugar.");
    expect(await context.search("knowledge", "absent")).toBeNull();
  });

  it("enforces maxTokens per entry", async () => {
    const { context, knowledge } = setup();
    const error = await expectCode(
      context.setEntry("knowledge", "long", "x".repeat(21)),
      "MAX_TOKENS",
      "knowledge",
    );
    expect(error.message).toContain("21");
    expect(error.message).toContain("20");
    expect(knowledge.set).not.toHaveBeenCalled();
  });

  it("passes a description to a loadable block and loads the entry back", async () => {
    const { context, skills } = setup();
    await context.setEntry("skills", "deploy", "Run wrangler deploy.", "How to deploy");
    expect(skills.entries.get("deploy")).toEqual({
      content: "Run wrangler deploy.",
      description: "How to deploy",
    });
    expect(await context.loadEntry("skills", "deploy")).toBe("Run wrangler deploy.");
    expect(context.loadedEntries()).toEqual([{ label: "skills", key: "deploy" }]);
    expect(context.unloadEntry("skills", "deploy")).toBe(true);
    expect(context.unloadEntry("skills", "deploy")).toBe(false);
    expect(await context.loadEntry("skills", "missing")).toBeNull();
    expect(context.loadedEntries()).toEqual([]);
  });

  it("refuses keyed writes to plain blocks and read-only ones", async () => {
    const { context, memory } = setup();
    await expectCode(context.setEntry("memory", "k", "x"), "KEYED_BLOCK", "memory");
    await expectCode(context.setEntry("soul", "k", "x"), "READONLY", "soul");
    await expectCode(context.setEntry("archive", "k", "x"), "READONLY", "archive");
    expect(memory.set).not.toHaveBeenCalled();
  });

  it("refuses an empty or non-string key and non-string content", async () => {
    const { context, knowledge } = setup();
    await expectCode(context.setEntry("knowledge", "", "x"), "INVALID_INPUT", "knowledge");
    await expectCode(
      context.setEntry("knowledge", 3 as unknown as string, "x"),
      "INVALID_INPUT",
      "knowledge",
    );
    await expectCode(
      context.setEntry("knowledge", "k", null as unknown as string),
      "INVALID_INPUT",
      "knowledge",
    );
    await expectCode(context.setEntry("skills", "k", "x", 5 as unknown as string), "INVALID_INPUT", "skills");
    expect(knowledge.set).not.toHaveBeenCalled();
  });

  it("deletes entries where the provider can, and says UNSUPPORTED where it cannot", async () => {
    const { context, knowledge } = setup();
    await context.setEntry("knowledge", "tea", "Green tea.");
    const block = await context.deleteEntry("knowledge", "tea");
    expect(knowledge.entries.size).toBe(0);
    expect(block.content).toBe("");
    await expectCode(context.deleteEntry("skills", "x"), "UNSUPPORTED", "skills");
  });

  it("a keyed write as the very first use calls init(label) before set, so the entry lands under the label", async () => {
    const store = new InMemoryStore();
    const knowledge = new InMemorySearchProvider({ store });
    const skills = new InMemorySkillProvider({ store });
    const context = new ContextBlocks([
      { label: "knowledge", provider: knowledge },
      { label: "skills", provider: skills },
    ]);
    await context.setEntry("knowledge", "tea", "Green tea.");
    await context.setEntry("skills", "deploy", "Run wrangler deploy.", "Deploy");
    expect(store.entriesOf("knowledge").get("tea")).toEqual({ content: "Green tea." });
    expect(store.entriesOf("skills").get("deploy")).toEqual({
      content: "Run wrangler deploy.",
      description: "Deploy",
    });
    expect(store.entriesOf("").size).toBe(0);
    expect(await context.search("knowledge", "tea")).toBe("[tea]\nGreen tea.");
  });

  it("a delete as the very first use calls init(label) first too", async () => {
    const store = new InMemoryStore();
    store.entriesOf("knowledge").set("tea", { content: "Green tea." });
    const context = new ContextBlocks([
      { label: "knowledge", provider: new InMemorySearchProvider({ store }) },
    ]);
    await context.deleteEntry("knowledge", "tea");
    expect(store.entriesOf("knowledge").size).toBe(0);
  });

  it("search and load refuse blocks that cannot do them", async () => {
    const { context } = setup();
    await expectCode(context.search("memory", "x"), "UNSUPPORTED", "memory");
    await expectCode(context.loadEntry("knowledge", "x"), "UNSUPPORTED", "knowledge");
  });
});

describe("a failing provider", () => {
  it("leaves the in-memory block unchanged and surfaces PROVIDER_FAILED with the cause", async () => {
    const provider = new FailingProvider("before");
    const context = new ContextBlocks([{ label: "memory", provider }]);
    await context.load();
    const error = await expectCode(context.setBlock("memory", "after"), "PROVIDER_FAILED", "memory");
    expect(error.cause).toBe(provider.error);
    expect(error.message).toContain("disk full");
    expect(context.getBlock("memory")?.content).toBe("before");
    await expectCode(context.appendToBlock("memory", "more"), "PROVIDER_FAILED", "memory");
    expect(context.getBlock("memory")?.content).toBe("before");
  });

  it("a failing keyed write surfaces PROVIDER_FAILED too", async () => {
    const failure = new Error("index locked");
    const provider = {
      get: async () => null,
      search: async () => null,
      set: async (): Promise<void> => {
        throw failure;
      },
    };
    const context = new ContextBlocks([{ label: "knowledge", provider }]);
    const error = await expectCode(context.setEntry("knowledge", "k", "v"), "PROVIDER_FAILED", "knowledge");
    expect(error.cause).toBe(failure);
  });

  it("a provider that throws a non-Error value is still reported with it as the cause", async () => {
    const context = new ContextBlocks([
      {
        label: "memory",
        provider: {
          get: async () => null,
          set: async (): Promise<void> => {
            throw "quota exceeded";
          },
        },
      },
    ]);
    const error = await expectCode(context.setBlock("memory", "x"), "PROVIDER_FAILED", "memory");
    expect(error.cause).toBe("quota exceeded");
    expect(error.message).toContain("quota exceeded");
  });
});

describe("the token counter", () => {
  it("the tokenCounter option decides usage and limits", async () => {
    const context = new ContextBlocks(
      [{ label: "memory", maxTokens: 3, provider: new RecordingProvider(null) }],
      null,
      null,
      { tokenCounter: (text) => text.split(" ").filter(Boolean).length },
    );
    const block = await context.setBlock("memory", "one two three");
    expect(block.tokens).toBe(3);
    expect(context.estimateTokens("a b")).toBe(2);
    await expectCode(context.setBlock("memory", "one two three four"), "MAX_TOKENS", "memory");
  });
});
