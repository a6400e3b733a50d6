import { describe, expect, it, vi } from "vitest";
import {
  acceptsWrites,
  blockKindOf,
  isSearchProvider,
  isSkillProvider,
  isWritableProvider,
} from "../src/capabilities.js";
import {
  ContextBlocks,
  type ContextConfig,
  ContextError,
  isContextError,
  SYSTEM_PROMPT_LABEL,
} from "../src/index.js";
import { InMemoryContextProvider, InMemoryStore } from "../src/memory/index.js";
import type { AnyContextProvider } from "../src/store-kit.js";
import { deferred, RecordingProvider, readonlyProvider, rejection, settle, thrown } from "./helpers.js";

function invalidConfig(configs: unknown): ContextError {
  const error = thrown(() => new ContextBlocks(configs as ContextConfig[]));
  expect(error).toBeInstanceOf(ContextError);
  expect((error as ContextError).code).toBe("INVALID_CONFIG");
  return error as ContextError;
}

describe("construction: agents/context's call forms", () => {
  it("new ContextBlocks(configs)", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
    ]);
    expect(await context.freezeSystemPrompt()).toContain("You are a helpful assistant.");
  });

  it("new ContextBlocks(configs, promptStore) persists the frozen prompt in the store", async () => {
    const store = new RecordingProvider();
    const context = new ContextBlocks([{ label: "soul", provider: { get: async () => "Be kind." } }], store);
    const prompt = await context.freezeSystemPrompt();
    expect(store.value).toBe(prompt);
  });

  it("new ContextBlocks(configs, promptStore, defaultProvider) wires blocks declared without a provider", async () => {
    const memory = new InMemoryStore();
    const context = new ContextBlocks(
      [{ label: "memory", description: "Learned facts", maxTokens: 2_000 }],
      new InMemoryContextProvider({ store: memory }),
      (label) => new InMemoryContextProvider({ store: memory, label }),
    );
    await context.setBlock("memory", "Likes tea.");
    expect(memory.blocks.get("memory")).toBe("Likes tea.");
    expect(await context.freezeSystemPrompt()).toContain("MEMORY (Learned facts) [");
    expect(memory.blocks.get(SYSTEM_PROMPT_LABEL)).toBe(await context.freezeSystemPrompt());
  });

  it("takes extras as a fourth options argument, with null or undefined for agents/context's arguments", async () => {
    const tokenCounter = vi.fn((text: string) => text.length);
    const first = new ContextBlocks(
      [{ label: "memory", maxTokens: 100, provider: new RecordingProvider("abcd") }],
      null,
      null,
      { tokenCounter },
    );
    const second = new ContextBlocks(
      [{ label: "memory", maxTokens: 100, provider: new RecordingProvider("abcd") }],
      undefined,
      undefined,
      { tokenCounter },
    );
    expect(await first.freezeSystemPrompt()).toContain("[4% — 4/100 tokens]");
    expect(await second.freezeSystemPrompt()).toContain("[4% — 4/100 tokens]");
    expect(tokenCounter).toHaveBeenCalledWith("abcd");
  });

  it("does not read any provider at construction", () => {
    const provider = new RecordingProvider("x");
    new ContextBlocks([{ label: "a", provider }], new RecordingProvider());
    expect(provider.get).not.toHaveBeenCalled();
    expect(provider.init).not.toHaveBeenCalled();
  });
});

describe("construction: invalid configuration is refused with INVALID_CONFIG", () => {
  it("refuses a repeated label, naming it", () => {
    const error = invalidConfig([
      { label: "memory", provider: new RecordingProvider() },
      { label: "memory", provider: new RecordingProvider() },
    ]);
    expect(error.message).toContain('"memory"');
    expect(error.message).toMatch(/twice|duplicate/i);
    expect(error.label).toBe("memory");
  });

  it("refuses labels that differ only in case: they would render under the same header", () => {
    const error = invalidConfig([
      { label: "memory", provider: new RecordingProvider() },
      { label: "Memory", provider: new RecordingProvider() },
    ]);
    expect(error.message).toContain("Memory");
  });

  it("refuses labels and titles that differ only in Unicode form (é as one character or as e and a combining accent): they render alike", async () => {
    const composed = "caf\u00e9";
    const decomposed = "cafe\u0301";
    expect(
      invalidConfig([
        { label: composed, provider: new RecordingProvider() },
        { label: decomposed, provider: new RecordingProvider() },
      ]).message,
    ).toMatch(/same header/);
    expect(
      invalidConfig([
        { label: "notes", description: composed.toUpperCase(), provider: new RecordingProvider() },
        { label: `notes (${decomposed})`, provider: new RecordingProvider() },
      ]).message,
    ).toMatch(/same header title/);
    const context = new ContextBlocks([{ label: decomposed, provider: new RecordingProvider("kept") }]);
    await expect(context.addBlock({ label: composed, provider: new RecordingProvider() })).rejects.toThrow(
      /same header/,
    );
    // Each label still renders as written: only the clash check compares composed forms.
    expect(await context.freezeSystemPrompt()).toContain(`\n${decomposed.toUpperCase()} [writable]\n`);
  });

  it("frees a header when its block is removed, so a label of another case can take it", async () => {
    const context = new ContextBlocks([{ label: "memory", provider: new RecordingProvider() }]);
    await expect(context.addBlock({ label: "MEMORY", provider: new RecordingProvider() })).rejects.toThrow(
      /same header/,
    );
    expect(context.removeBlock("memory")).toBe(true);
    const block = await context.addBlock({ label: "MEMORY", provider: new RecordingProvider("kept") });
    expect(block.content).toBe("kept");
  });

  it.each([
    ["a few blocks (scanned)", 3],
    ["many blocks (looked up in maps)", 40],
  ])("with %s, finds every clash and keeps look-ups right through removals", async (_name, count) => {
    const blocks = (extra: ContextConfig[] = []): ContextConfig[] => [
      ...Array.from(
        { length: count },
        (_, index): ContextConfig => ({
          label: `block_${index}`,
          ...(index === 1 ? { description: "LIVE" } : {}),
          provider: new RecordingProvider(`content ${index}`),
        }),
      ),
      ...extra,
    ];
    const last = `block_${count - 1}`;
    expect(invalidConfig(blocks([{ label: last, provider: new RecordingProvider() }])).message).toMatch(
      /twice/,
    );
    expect(
      invalidConfig(blocks([{ label: last.toUpperCase(), provider: new RecordingProvider() }])).message,
    ).toMatch(/same header/);
    expect(
      invalidConfig(blocks([{ label: "block_1 (live)", provider: new RecordingProvider() }])).message,
    ).toMatch(/same header title/);

    const context = new ContextBlocks(blocks());
    await context.load();
    expect((await context.setBlock(last, "x")).content).toBe("x");
    await expect(context.setBlock("block_missing", "x")).rejects.toThrow(/not found/);
    expect(context.removeBlock("block_0")).toBe(true);
    expect(context.removeBlock("block_0")).toBe(false);
    expect(
      (await context.addBlock({ label: "BLOCK_0", provider: new RecordingProvider("again") })).content,
    ).toBe("again");
    await expect(context.addBlock({ label: "Block_0", provider: new RecordingProvider() })).rejects.toThrow(
      /same header/,
    );
    await expect(context.addBlock({ label: last, provider: new RecordingProvider() })).rejects.toThrow(
      /twice/,
    );
    expect(context.getBlock(last)?.content).toBe("x");
    expect(context.getConfigs().map((config) => config.label)).toEqual([
      ...Array.from({ length: count - 1 }, (_, index) => `block_${index + 1}`),
      "BLOCK_0",
    ]);
  });

  it.each([
    ["an empty label", ""],
    ["a blank label", "   "],
    ["a missing label", undefined],
    ["a number label", 7],
    ["a null label", null],
  ])("refuses %s", (_name, label) => {
    const error = invalidConfig([{ label, provider: new RecordingProvider() }]);
    expect(error.message).toMatch(/label/);
  });

  it.each([
    ["surrounding spaces", " memory "],
    ["a line break", "mem\nory"],
    ["a carriage return", "mem\rory"],
    ["a line separator", "mem\u2028ory"],
    ["a control character", "mem\u0007ory"],
    ["a C1 control character", "mem\u0085ory"],
    ["a rule character", "mem═ory"],
  ])("refuses a label with %s", (_name, label) => {
    const error = invalidConfig([{ label, provider: new RecordingProvider() }]);
    expect(error.message).toContain("label");
  });

  it.each([
    ["zero", 0],
    ["negative", -5],
    ["fractional", 1.5],
    ["a string", "100"],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
  ])("refuses a maxTokens that is %s", (_name, maxTokens) => {
    const error = invalidConfig([{ label: "memory", maxTokens, provider: new RecordingProvider() }]);
    expect(error.message).toContain("maxTokens");
    expect(error.message).toContain('"memory"');
  });

  it("refuses a description with a line break (it would split the header)", () => {
    const error = invalidConfig([
      { label: "memory", description: "one\ntwo", provider: new RecordingProvider() },
    ]);
    expect(error.message).toContain("description");
  });

  it("refuses an unknown whenChanged", () => {
    const error = invalidConfig([
      { label: "memory", whenChanged: "always", provider: new RecordingProvider() },
    ]);
    expect(error.message).toContain("whenChanged");
  });

  it("refuses a provider without get()", () => {
    const error = invalidConfig([{ label: "memory", provider: { set: async () => {} } }]);
    expect(error.message).toContain("get()");
  });

  it("refuses a default provider without get()", () => {
    const error = thrown(
      () => new ContextBlocks([{ label: "memory" }], null, () => ({}) as unknown as AnyContextProvider),
    );
    expect((error as ContextError).code).toBe("INVALID_CONFIG");
  });

  it("refuses a non-array configuration and a non-object config", () => {
    invalidConfig({ label: "memory" });
    invalidConfig(["memory"]);
    invalidConfig([null]);
  });

  it("refuses a prompt store that cannot be written", () => {
    const error = thrown(
      () =>
        new ContextBlocks(
          [],
          readonlyProvider("x") as unknown as ConstructorParameters<typeof ContextBlocks>[1],
        ),
    );
    expect((error as ContextError).code).toBe("INVALID_CONFIG");
    expect((error as Error).message).toContain("prompt store");
  });

  it("errors are ContextError instances with a stable code and name", () => {
    const error = invalidConfig([{ label: "" }]);
    expect(isContextError(error)).toBe(true);
    expect(isContextError(new Error("x"))).toBe(false);
    expect(error.name).toBe("ContextError");
    expect(error).toBeInstanceOf(Error);
  });
});

describe("capabilities are structural", () => {
  const get = async () => null;
  const set = async () => {};
  const search = async () => null;
  const load = async () => null;

  it("decides the kind by which methods exist, in marker precedence", () => {
    expect(blockKindOf({ get })).toBe("readonly");
    expect(blockKindOf({ get, set })).toBe("writable");
    expect(blockKindOf({ get, load })).toBe("loadable");
    expect(blockKindOf({ get, load, set })).toBe("loadable");
    expect(blockKindOf({ get, search })).toBe("searchable");
    expect(blockKindOf({ get, search, set })).toBe("searchable");
    expect(blockKindOf({ get, search, load, set })).toBe("searchable");
    expect(blockKindOf(undefined)).toBe("readonly");
  });

  it("needs function-valued properties: a non-function `set` or `search` does not count", () => {
    const fake = { get, set: "yes", search: true, load: 1 } as unknown as AnyContextProvider;
    expect(blockKindOf(fake)).toBe("readonly");
    expect(isWritableProvider(fake)).toBe(false);
    expect(isSearchProvider(fake)).toBe(false);
    expect(isSkillProvider(fake)).toBe(false);
    expect(acceptsWrites(fake)).toBe(false);
  });

  it("finds methods on class prototypes, not only own properties", () => {
    class Store {
      async get() {
        return "x";
      }
      async set(_content: string) {}
    }
    expect(blockKindOf(new Store())).toBe("writable");
  });

  it("a block without a provider (and no default) is an empty read-only block", async () => {
    const context = new ContextBlocks([{ label: "nothing" }]);
    expect(await context.freezeSystemPrompt()).toBe("");
    expect(context.toolSpecs()).toEqual([]);
    expect(context.getBlock("nothing")).toMatchObject({ kind: "readonly", content: "", writable: false });
  });

  it("reports capability flags on the loaded block", async () => {
    const context = new ContextBlocks([
      { label: "a", provider: { get } },
      { label: "b", provider: { get, set } },
      { label: "c", provider: { get, search } },
      { label: "d", provider: { get, load } },
      { label: "e", provider: { get, search, set } },
    ]);
    await context.load();
    const flags = context.getBlocks().map(({ label, kind, writable, isSearchable, isSkill }) => ({
      label,
      kind,
      writable,
      isSearchable,
      isSkill,
    }));
    expect(flags).toEqual([
      { label: "a", kind: "readonly", writable: false, isSearchable: false, isSkill: false },
      { label: "b", kind: "writable", writable: true, isSearchable: false, isSkill: false },
      { label: "c", kind: "searchable", writable: false, isSearchable: true, isSkill: false },
      { label: "d", kind: "loadable", writable: false, isSearchable: false, isSkill: true },
      { label: "e", kind: "searchable", writable: true, isSearchable: true, isSkill: false },
    ]);
  });
});

describe("init(label) and defaultProvider", () => {
  it("calls init with the block's label exactly once, before the first get", async () => {
    const order: string[] = [];
    const provider = {
      init: vi.fn((label: string) => {
        order.push(`init ${label}`);
      }),
      get: vi.fn(async () => {
        order.push("get");
        return "hello";
      }),
      set: vi.fn(async () => {
        order.push("set");
      }),
    };
    const context = new ContextBlocks([{ label: "memory", provider }]);
    await context.freezeSystemPrompt();
    await context.setBlock("memory", "a");
    await context.appendToBlock("memory", "b");
    await context.refreshSystemPrompt();
    await context.reminder();
    await context.load();
    expect(provider.init).toHaveBeenCalledTimes(1);
    expect(provider.init).toHaveBeenCalledWith("memory");
    expect(order[0]).toBe("init memory");
  });

  it("calls init once even when the first uses come in parallel", async () => {
    const provider = new RecordingProvider("x");
    const context = new ContextBlocks([{ label: "memory", provider }]);
    await Promise.all([
      context.load(),
      context.appendToBlock("memory", "y"),
      context.setBlock("memory", "z"),
      context.freezeSystemPrompt(),
    ]);
    expect(provider.init).toHaveBeenCalledTimes(1);
  });

  it("waits for an async init before any other call reaches the provider", async () => {
    const ready = deferred();
    const calls: string[] = [];
    const provider = {
      init: vi.fn(async () => {
        await ready.promise;
        calls.push("init done");
      }),
      get: vi.fn(async () => {
        calls.push("get");
        return "x";
      }),
      set: vi.fn(async () => {
        calls.push("set");
      }),
    };
    const context = new ContextBlocks([{ label: "memory", provider }]);
    const first = context.load();
    const second = context.setBlock("memory", "y");
    const third = context.refreshSystemPrompt();
    await settle();
    expect(calls).toEqual([]);
    ready.resolve();
    await Promise.all([first, second, third]);
    expect(calls[0]).toBe("init done");
    expect(provider.init).toHaveBeenCalledTimes(1);
  });

  it("surfaces a failing init as PROVIDER_FAILED naming the block, and tries again on the next use", async () => {
    let fail = true;
    const provider = {
      init: vi.fn(async () => {
        if (fail) throw new Error("no database");
      }),
      get: vi.fn(async () => "x"),
    };
    const context = new ContextBlocks([{ label: "facts", provider }]);
    const error = (await rejection(context.freezeSystemPrompt())) as ContextError;
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toContain('"facts"');
    expect((error.cause as Error).message).toBe("no database");
    expect(provider.get).not.toHaveBeenCalled();
    fail = false;
    expect(await context.freezeSystemPrompt()).toContain("x");
    expect(provider.init).toHaveBeenCalledTimes(2);
  });

  it("a synchronous init that throws fails as PROVIDER_FAILED and is tried again; one that returns is not", async () => {
    let fail = true;
    const provider = {
      init: vi.fn(() => {
        if (fail) throw new Error("not yet");
      }),
      get: vi.fn(async () => "x"),
    };
    const context = new ContextBlocks([{ label: "facts", provider }]);
    const error = (await rejection(context.freezeSystemPrompt())) as ContextError;
    expect(error.code).toBe("PROVIDER_FAILED");
    expect((error.cause as Error).message).toBe("not yet");
    expect(provider.get).not.toHaveBeenCalled();
    fail = false;
    expect(await context.freezeSystemPrompt()).toContain("x");
    await context.refreshSystemPrompt();
    expect(provider.init).toHaveBeenCalledTimes(2);
  });

  it("calls the prompt store's init with the system prompt label once", async () => {
    const store = new RecordingProvider();
    const context = new ContextBlocks([{ label: "soul", provider: readonlyProvider("hi") }], store);
    await context.freezeSystemPrompt();
    await context.refreshSystemPrompt();
    await context.reminder();
    expect(store.init).toHaveBeenCalledTimes(1);
    expect(store.init).toHaveBeenCalledWith(SYSTEM_PROMPT_LABEL);
  });

  it("asks defaultProvider only for blocks declared without a provider, by label", async () => {
    const own = new RecordingProvider("own");
    const made = new Map<string, RecordingProvider>();
    const defaultProvider = vi.fn((label: string) => {
      const provider = new RecordingProvider(`default ${label}`);
      made.set(label, provider);
      return provider;
    });
    const context = new ContextBlocks(
      [{ label: "soul", provider: own }, { label: "memory" }, { label: "notes" }],
      null,
      defaultProvider,
    );
    expect(defaultProvider.mock.calls.map(([label]) => label)).toEqual(["memory", "notes"]);
    const prompt = await context.freezeSystemPrompt();
    expect(prompt).toContain("own");
    expect(prompt).toContain("default memory");
    expect(prompt).toContain("default notes");
    await context.setBlock("notes", "written");
    expect(made.get("notes")?.value).toBe("written");
    expect(own.writes).toEqual([]);
  });

  it("without a defaultProvider, a block without a provider stays an empty read-only block", async () => {
    const context = new ContextBlocks([{ label: "memory" }]);
    const error = (await rejection(context.setBlock("memory", "x"))) as ContextError;
    expect(error.code).toBe("READONLY");
  });
});
