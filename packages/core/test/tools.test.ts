import { describe, expect, it } from "vitest";
import { ContextBlocks, type ContextToolSpec, entryKey } from "../src/index.js";
import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
  InMemoryStore,
} from "../src/memory/index.js";
import { buildToolSpecs } from "../src/tools/build.js";
import { readonlyProvider } from "./helpers.js";

function setup(options: { maxToolContentLength?: number } = {}) {
  const store = new InMemoryStore();
  const context = new ContextBlocks(
    [
      { label: "soul", provider: readonlyProvider("You are helpful.") },
      {
        label: "memory",
        description: "Facts learned about the user",
        maxTokens: 1_100,
        provider: new InMemoryContextProvider({ store, label: "memory" }),
      },
      { label: "small", maxTokens: 5, provider: new InMemoryContextProvider({ store, label: "small" }) },
      {
        label: "knowledge",
        description: "Reference notes",
        provider: new InMemorySearchProvider({ store, label: "knowledge" }),
      },
      {
        label: "skills",
        description: "How-tos",
        provider: new InMemorySkillProvider({
          store,
          label: "skills",
          skills: { deploy: { content: "Run wrangler deploy.", description: "Deploy the worker" } },
        }),
      },
      {
        label: "archive",
        provider: { get: async () => "3 entries indexed.", search: async () => "[old]\nold" },
      },
    ],
    null,
    null,
    { tokenCounter: (text) => text.length, ...options },
  );
  return { context, store };
}

function spec(specs: ContextToolSpec[], name: string): ContextToolSpec {
  const found = specs.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no ${name} tool`);
  return found;
}

/** A tool whose `execute` resolves to the text the model reads (outcomes are checked where they matter). */
function tool(specs: ContextToolSpec[], name: string) {
  const found = spec(specs, name);
  return { ...found, execute: async (input: unknown) => (await found.execute(input)).text };
}

/** Everything stored, to check that a refused call changed nothing. */
function snapshot(store: InMemoryStore): string {
  return JSON.stringify({
    blocks: [...store.blocks],
    entries: [...store.entries].map(([label, entries]) => [label, [...entries]]),
  });
}

describe("which tools exist", () => {
  it("only read-only blocks: no tools at all", () => {
    const context = new ContextBlocks([
      { label: "soul", provider: readonlyProvider("x") },
      { label: "rules", provider: readonlyProvider("y") },
    ]);
    expect(context.toolSpecs()).toEqual([]);
    expect(new ContextBlocks([]).toolSpecs()).toEqual([]);
  });

  it("a writable block gives set_context and edit_context", () => {
    const context = new ContextBlocks([{ label: "memory", provider: new InMemoryContextProvider() }]);
    expect(context.toolSpecs().map((spec) => spec.name)).toEqual(["set_context", "edit_context"]);
  });

  it("a read-only searchable block gives search_context only", () => {
    const context = new ContextBlocks([
      { label: "archive", provider: { get: async () => null, search: async () => null } },
    ]);
    expect(context.toolSpecs().map((spec) => spec.name)).toEqual(["search_context"]);
  });

  it("all kinds give all five tools in a fixed order", () => {
    const { context } = setup();
    expect(context.toolSpecs().map((spec) => spec.name)).toEqual([
      "set_context",
      "edit_context",
      "search_context",
      "load_context",
      "unload_context",
    ]);
    expect(buildToolSpecs(context).map((spec) => spec.name)).toEqual(
      context.toolSpecs().map((spec) => spec.name),
    );
  });

  it("input schemas are JSON Schema objects with label enums of the right blocks", () => {
    const specs = setup().context.toolSpecs();
    const labels = (name: string) =>
      (tool(specs, name).inputSchema.properties as Record<string, { enum?: string[] }>).label?.enum ?? [];
    expect(labels("set_context")).toEqual(["memory", "small", "knowledge", "skills"]);
    expect(labels("search_context")).toEqual(["knowledge", "archive"]);
    expect(labels("load_context")).toEqual(["skills"]);
    expect(labels("unload_context")).toEqual(["skills"]);
    for (const spec of specs) {
      expect(spec.inputSchema.type).toBe("object");
      expect(spec.inputSchema.required).toContain("label");
    }
    expect(tool(specs, "set_context").inputSchema.required).toEqual(["label", "content"]);
    const properties = tool(specs, "set_context").inputSchema.properties as Record<string, unknown>;
    expect(properties.metadata).toBeDefined();
    expect(properties.action).toMatchObject({ enum: ["replace", "append"] });
  });

  it("set_context has no metadata property when no block is keyed", () => {
    const context = new ContextBlocks([{ label: "memory", provider: new InMemoryContextProvider() }]);
    const properties = tool(context.toolSpecs(), "set_context").inputSchema.properties as Record<
      string,
      unknown
    >;
    expect(properties.metadata).toBeUndefined();
  });

  it("set_context describes each writable block with its kind and description", () => {
    const description = tool(setup().context.toolSpecs(), "set_context").description;
    expect(description).toContain('- "memory" (writable): Facts learned about the user');
    expect(description).toContain('- "small" (writable): no description');
    expect(description).toContain('- "knowledge" (searchable, keyed entries): Reference notes');
    // agents' label for a skill block, so definitions migrated from agents match.
    expect(description).toContain('- "skills" (skill collection, keyed entries): How-tos');
    expect(description).not.toContain('"soul"');
    expect(description).not.toContain('"archive"');
  });
});

describe("tool descriptions are a pure function of the configuration", () => {
  it("are identical before and after content writes, entry writes and loads", async () => {
    const { context } = setup();
    const before = JSON.stringify(
      context.toolSpecs().map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    );
    const specs = context.toolSpecs();
    await tool(specs, "set_context").execute({ label: "memory", content: "Likes tea." });
    await tool(specs, "set_context").execute({
      label: "knowledge",
      content: "Tea is brewed at 80°C.",
      metadata: { title: "Tea" },
    });
    await tool(specs, "set_context").execute({
      label: "skills",
      content: "Run tests.",
      metadata: { title: "Test", description: "How to test" },
    });
    await tool(specs, "load_context").execute({ label: "skills", key: "deploy" });
    await context.refreshSystemPrompt();
    const after = JSON.stringify(
      context.toolSpecs().map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    );
    expect(after).toBe(before);
  });

  it("are identical between two instances with the same configuration and different content", () => {
    const first = setup().context.toolSpecs();
    const other = setup();
    other.store.blocks.set("memory", "Something else entirely.");
    const second = other.context.toolSpecs();
    expect(JSON.stringify(second.map(({ execute: _, ...rest }) => rest))).toBe(
      JSON.stringify(first.map(({ execute: _, ...rest }) => rest)),
    );
  });
});

describe("set_context", () => {
  it("replaces a writable block and reports usage like agents/context", async () => {
    const { context, store } = setup();
    const result = await tool(context.toolSpecs(), "set_context").execute({
      label: "memory",
      content: "x".repeat(495),
    });
    expect(result).toBe("Written to memory. Usage: 45% (495/1100 tokens)");
    expect(store.blocks.get("memory")).toBe("x".repeat(495));
  });

  it("appends with action: append", async () => {
    const { context, store } = setup();
    const set = tool(context.toolSpecs(), "set_context");
    await set.execute({ label: "memory", content: "one" });
    expect(await set.execute({ label: "memory", content: "two", action: "append" })).toBe(
      "Written to memory. Usage: 1% (7/1100 tokens)",
    );
    expect(store.blocks.get("memory")).toBe("one\ntwo");
  });

  it("reports a token count when the block has no limit", async () => {
    const context = new ContextBlocks(
      [{ label: "notes", provider: new InMemoryContextProvider() }],
      null,
      null,
      {
        tokenCounter: (text) => text.length,
      },
    );
    expect(await tool(context.toolSpecs(), "set_context").execute({ label: "notes", content: "abc" })).toBe(
      "Written to notes. Usage: 3 tokens",
    );
  });

  it("indexes a keyed entry under the title's key and updates it in place", async () => {
    const { context, store } = setup();
    const set = tool(context.toolSpecs(), "set_context");
    expect(
      await set.execute({ label: "knowledge", content: "Green tea.", metadata: { title: "Tea notes" } }),
    ).toBe('Indexed "tea-notes" in knowledge.');
    await set.execute({ label: "knowledge", content: "Black tea.", metadata: { title: "Tea notes" } });
    expect([...store.entriesOf("knowledge")]).toEqual([["tea-notes", { content: "Black tea." }]]);
  });

  it("keys an untitled entry by its content", async () => {
    const { context, store } = setup();
    const result = await tool(context.toolSpecs(), "set_context").execute({
      label: "knowledge",
      content: "Oolong.",
    });
    const key = entryKey(undefined, "Oolong.");
    expect(result).toBe(`Indexed "${key}" in knowledge.`);
    expect(store.entriesOf("knowledge").get(key)?.content).toBe("Oolong.");
  });

  it("writes a skill with its description", async () => {
    const { context, store } = setup();
    await tool(context.toolSpecs(), "set_context").execute({
      label: "skills",
      content: "Run pnpm test.",
      metadata: { title: "Testing", description: "How to run the tests" },
    });
    expect(store.entriesOf("skills").get("testing")).toEqual({
      content: "Run pnpm test.",
      description: "How to run the tests",
    });
  });
});

describe("bad tool input: an Error string naming the problem, nothing stored", () => {
  const cases: [string, string, unknown, RegExp][] = [
    ["non-object input (string)", "set_context", "memory: likes tea", /expects an object/],
    ["non-object input (null)", "set_context", null, /expects an object/],
    ["non-object input (array)", "set_context", ["memory", "x"], /expects an object.*array/],
    ["non-object input (number)", "set_context", 42, /expects an object/],
    ["missing label", "set_context", { content: "x" }, /"label" is required/],
    ["non-string label", "set_context", { label: 7, content: "x" }, /"label" must be a string/],
    ["unknown label", "set_context", { label: "diary", content: "x" }, /Block "diary" not found/],
    ["read-only label", "set_context", { label: "soul", content: "x" }, /Block "soul" is readonly/],
    [
      "read-only searchable label",
      "set_context",
      { label: "archive", content: "x" },
      /Block "archive" is readonly/,
    ],
    ["missing content", "set_context", { label: "memory" }, /"content" is required/],
    ["null content", "set_context", { label: "memory", content: null }, /"content" is required/],
    [
      "non-string content",
      "set_context",
      { label: "memory", content: 12 },
      /"content" must be a string, got number 12/,
    ],
    [
      "object content",
      "set_context",
      { label: "memory", content: { text: "x" } },
      /"content" must be a string, got an object/,
    ],
    [
      "wrong action",
      "set_context",
      { label: "memory", content: "x", action: "delete" },
      /"action" must be "replace" or "append"/,
    ],
    [
      "non-string action",
      "set_context",
      { label: "memory", content: "x", action: true },
      /"action" must be a string/,
    ],
    [
      "metadata not an object",
      "set_context",
      { label: "knowledge", content: "x", metadata: "Tea" },
      /"metadata" must be an object/,
    ],
    [
      "metadata an array",
      "set_context",
      { label: "knowledge", content: "x", metadata: ["Tea"] },
      /"metadata" must be an object/,
    ],
    [
      "metadata title not a string",
      "set_context",
      { label: "knowledge", content: "x", metadata: { title: 5 } },
      /"metadata.title" must be a string/,
    ],
    [
      "metadata description not a string",
      "set_context",
      { label: "skills", content: "x", metadata: { title: "t", description: [] } },
      /"metadata.description" must be a string/,
    ],
    [
      "huge content",
      "set_context",
      { label: "memory", content: "x".repeat(300_000) },
      /300000 characters; the limit is 262144/,
    ],
    [
      "content over maxTokens",
      "set_context",
      { label: "small", content: "123456" },
      /Block "small" exceeds maxTokens: 6 > 5/,
    ],
    [
      "append over maxTokens",
      "set_context",
      { label: "small", content: "123456", action: "append" },
      /maxTokens/,
    ],
    [
      "keyed block without content",
      "set_context",
      { label: "knowledge", metadata: { title: "Tea" } },
      /"content" is required/,
    ],
    [
      "skill without content",
      "set_context",
      { label: "skills", metadata: { title: "T" } },
      /"content" is required/,
    ],
    ["search: non-object input", "search_context", "tea", /expects an object/],
    ["search: missing label", "search_context", { query: "tea" }, /"label" is required/],
    ["search: unknown label", "search_context", { label: "diary", query: "tea" }, /Block "diary" not found/],
    [
      "search: non-searchable label",
      "search_context",
      { label: "memory", query: "tea" },
      /Block "memory" is not searchable/,
    ],
    ["search: missing query", "search_context", { label: "knowledge" }, /"query" is required/],
    [
      "search: non-string query",
      "search_context",
      { label: "knowledge", query: ["tea"] },
      /"query" must be a string/,
    ],
    ["search: empty query", "search_context", { label: "knowledge", query: "   " }, /"query" is empty/],
    ["load: non-object input", "load_context", undefined, /expects an object/],
    ["load: missing key", "load_context", { label: "skills" }, /"key" is required/],
    ["load: non-string key", "load_context", { label: "skills", key: 1 }, /"key" must be a string/],
    ["load: unknown label", "load_context", { label: "diary", key: "deploy" }, /Block "diary" not found/],
    [
      "load: non-loadable label",
      "load_context",
      { label: "knowledge", key: "deploy" },
      /Block "knowledge" is not loadable/,
    ],
    [
      "load: unknown key",
      "load_context",
      { label: "skills", key: "nope" },
      /no entry "nope" in skills\. Not found/,
    ],
    ["unload: missing label", "unload_context", { key: "deploy" }, /"label" is required/],
    [
      "unload: non-loadable label",
      "unload_context",
      { label: "memory", key: "deploy" },
      /Block "memory" is not loadable/,
    ],
  ];

  it.each(cases)("%s", async (_name, name, input, message) => {
    const { context, store } = setup();
    await context.setBlock("small", "12");
    const before = snapshot(store);
    const loadedBefore = context.loadedEntries();
    const result = await spec(context.toolSpecs(), name).execute(input);
    expect(result.isError).toBe(true);
    expect(result.text.startsWith("Error: ")).toBe(true);
    expect(result.text).toMatch(message);
    expect(snapshot(store)).toBe(before);
    expect(context.loadedEntries()).toEqual(loadedBefore);
  });

  it("never throws, even when the provider fails", async () => {
    const context = new ContextBlocks([
      {
        label: "memory",
        provider: {
          get: async () => null,
          set: async () => {
            throw new Error("database is locked");
          },
        },
      },
      {
        label: "knowledge",
        provider: {
          get: async () => null,
          search: async () => {
            throw new Error("index corrupt");
          },
        },
      },
    ]);
    const specs = context.toolSpecs();
    expect(await tool(specs, "set_context").execute({ label: "memory", content: "x" })).toMatch(
      /^Error: .*"memory".*database is locked/,
    );
    expect(await tool(specs, "search_context").execute({ label: "knowledge", query: "x" })).toMatch(
      /^Error: .*index corrupt/,
    );
  });

  it("ignores unknown extra fields rather than failing", async () => {
    const { context, store } = setup();
    expect(
      await tool(context.toolSpecs(), "set_context").execute({
        label: "memory",
        content: "ok",
        mood: "happy",
      }),
    ).toMatch(/^Written to memory/);
    expect(store.blocks.get("memory")).toBe("ok");
  });
});

describe("search_context, load_context, unload_context", () => {
  it("search returns ranked matches or No results found.", async () => {
    const { context } = setup();
    const specs = context.toolSpecs();
    await tool(specs, "set_context").execute({
      label: "knowledge",
      content: "The office wifi password is on the fridge.",
      metadata: { title: "Wifi" },
    });
    expect(
      await tool(specs, "search_context").execute({
        label: "knowledge",
        query: "Where is the wifi password?",
      }),
    ).toBe("[wifi]\nThe office wifi password is on the fridge.");
    expect(await tool(specs, "search_context").execute({ label: "knowledge", query: "volcano" })).toBe(
      "No results found.",
    );
    expect(await tool(specs, "search_context").execute({ label: "archive", query: "old" })).toBe(
      "[old]\nold",
    );
  });

  it("load returns the entry in full and marks it loaded; unload drops it", async () => {
    const { context } = setup();
    const specs = context.toolSpecs();
    expect(await tool(specs, "load_context").execute({ label: "skills", key: "deploy" })).toBe(
      "Run wrangler deploy.",
    );
    expect(context.loadedEntries()).toEqual([{ label: "skills", key: "deploy" }]);
    expect(await tool(specs, "unload_context").execute({ label: "skills", key: "deploy" })).toBe(
      'Unloaded "deploy" from skills.',
    );
    expect(context.loadedEntries()).toEqual([]);
  });
});

describe("labels quoted in tool descriptions", () => {
  // Labels may hold `"` and `\` (only line breaks, control characters, `═` and surrounding spaces are refused).
  const context = new ContextBlocks([
    { label: "memory", provider: new InMemoryContextProvider() },
    { label: 'say "hi", "soul"', provider: new InMemoryContextProvider() },
    { label: "notes\\", provider: new InMemorySearchProvider() },
    { label: 'how "to"', provider: new InMemorySkillProvider() },
  ]);
  const specs = context.toolSpecs();

  /** The labels a description lists after `before`, read back as the model reads the quoted list. */
  function listed(description: string, before: string, after: string): string[] {
    const start = description.indexOf(before) + before.length;
    return JSON.parse(`[${description.slice(start, description.indexOf(after, start))}]`);
  }

  it("escape a quote or backslash, so each list reads back as exactly the blocks' labels", () => {
    expect(listed(tool(specs, "search_context").description, "searchable: ", ". Other")).toEqual(["notes\\"]);
    expect(listed(tool(specs, "load_context").description, "Loadable blocks: ", "; each")).toEqual([
      'how "to"',
    ]);
    expect(listed(tool(specs, "unload_context").description, "Loadable blocks: ", ".")).toEqual(['how "to"']);
    const setContext = tool(specs, "set_context");
    expect(setContext.description).toContain('\n- "say \\"hi\\", \\"soul\\"" (writable): no description\n');
    const metadata = (setContext.inputSchema.properties as Record<string, { description: string }>).metadata;
    expect(listed(metadata?.description ?? "", "keyed blocks: ", "). A title")).toEqual([
      "notes\\",
      'how "to"',
    ]);
  });

  it("name the blocks the same way in an error", async () => {
    const text = await tool(specs, "load_context").execute({ label: "nope", key: "k" });
    expect(text).toBe('Error: Block "nope" not found. Loadable blocks: "how \\"to\\""');
  });

  it("leave ordinary labels as they were: in plain double quotes", () => {
    expect(tool(specs, "set_context").description).toContain('\n- "memory" (writable): no description\n');
  });
});
