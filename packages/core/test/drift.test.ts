import { afterEach, describe, expect, it, vi } from "vitest";
import { detectDrift } from "../src/drift.js";
import { ContextBlocks, type ContextConfig, SYSTEM_PROMPT_LABEL } from "../src/index.js";
import { InMemoryContextProvider, InMemorySearchProvider, InMemoryStore } from "../src/memory/index.js";
import { readonlyProvider } from "./helpers.js";

type Declaration = Omit<ContextConfig, "provider"> & { kind?: "readonly" | "writable" | "searchable" };

/** Providers over a shared store, so a second instance is a restart of the first. */
function build(store: InMemoryStore, declarations: Declaration[]) {
  const reads = vi.fn();
  const configs = declarations.map(({ kind = "writable", ...config }): ContextConfig => {
    if (kind === "readonly") {
      return {
        ...config,
        provider: {
          get: async () => {
            reads(config.label);
            return `read-only ${config.label}`;
          },
        },
      };
    }
    const provider =
      kind === "searchable"
        ? new InMemorySearchProvider({ store, label: config.label })
        : new InMemoryContextProvider({ store, label: config.label, initial: `content of ${config.label}` });
    const original = provider.get.bind(provider);
    provider.get = async () => {
      reads(config.label);
      return original();
    };
    return { ...config, provider };
  });
  return { configs, reads };
}

const BASE: Declaration[] = [
  { label: "soul", kind: "readonly" },
  { label: "memory", description: "Facts learned about the user", maxTokens: 1_100 },
  { label: "notes" },
];

async function coldStart(
  changed: Declaration[],
  options: { drift?: "rerender" | "keep"; before?: Declaration[] } = {},
) {
  const store = new InMemoryStore();
  const first = new ContextBlocks(
    build(store, options.before ?? BASE).configs,
    new InMemoryContextProvider({ store }),
  );
  const stored = await first.freezeSystemPrompt();
  const onDrift = vi.fn();
  const { configs, reads } = build(store, changed);
  const second = new ContextBlocks(configs, new InMemoryContextProvider({ store }), null, {
    onDrift,
    ...(options.drift ? { drift: options.drift } : {}),
  });
  const prompt = await second.freezeSystemPrompt();
  return { stored, prompt, onDrift, reads, store, second };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("configuration drift on a cold start", () => {
  it("no drift: the stored prompt is served and onDrift is not called", async () => {
    const { stored, prompt, onDrift, reads } = await coldStart(BASE);
    expect(prompt).toBe(stored);
    expect(onDrift).not.toHaveBeenCalled();
    expect(reads).not.toHaveBeenCalled();
  });

  it("content changes alone (usage numbers move) are not drift", async () => {
    const store = new InMemoryStore();
    const first = new ContextBlocks(build(store, BASE).configs, new InMemoryContextProvider({ store }));
    await first.setBlock("memory", "A much longer memory than before, with several more words in it.");
    const stored = await first.refreshSystemPrompt();
    await first.setBlock("memory", "short");
    const onDrift = vi.fn();
    const second = new ContextBlocks(
      build(store, BASE).configs,
      new InMemoryContextProvider({ store }),
      null,
      {
        onDrift,
      },
    );
    expect(await second.freezeSystemPrompt()).toBe(stored);
    expect(onDrift).not.toHaveBeenCalled();
  });

  it.each<[string, Declaration[]]>([
    ["a block added", [...BASE, { label: "todo" }]],
    ["a block added in the middle", [BASE[0] as Declaration, { label: "todo" }, ...BASE.slice(1)]],
    ["a block removed", BASE.slice(0, 2)],
    ["a read-only block removed", BASE.slice(1)],
    ["a block renamed", [BASE[0] as Declaration, BASE[1] as Declaration, { label: "scratchpad" }]],
    [
      "a description changed",
      [
        BASE[0] as Declaration,
        { ...(BASE[1] as Declaration), description: "What we know" },
        BASE[2] as Declaration,
      ],
    ],
    [
      "a description added",
      [BASE[0] as Declaration, BASE[1] as Declaration, { label: "notes", description: "Scratch" }],
    ],
    [
      "a limit changed",
      [BASE[0] as Declaration, { ...(BASE[1] as Declaration), maxTokens: 2_000 }, BASE[2] as Declaration],
    ],
    ["a limit added", [BASE[0] as Declaration, BASE[1] as Declaration, { label: "notes", maxTokens: 500 }]],
    [
      "a limit removed",
      [
        BASE[0] as Declaration,
        { label: "memory", description: "Facts learned about the user" },
        BASE[2] as Declaration,
      ],
    ],
    ["blocks reordered", [BASE[0] as Declaration, BASE[2] as Declaration, BASE[1] as Declaration]],
    [
      "a kind changed",
      [BASE[0] as Declaration, BASE[1] as Declaration, { label: "notes", kind: "searchable" }],
    ],
  ])("%s: detected, reported, and re-rendered once by default", async (_name, changed) => {
    const { stored, prompt, onDrift, reads, store, second } = await coldStart(changed);
    expect(onDrift).toHaveBeenCalledTimes(1);
    expect(onDrift.mock.calls[0]?.[0]).toMatch(/^stored prompt does not match the block configuration: /);
    expect(prompt).not.toBe(stored);
    expect(reads).toHaveBeenCalled();
    expect(store.blocks.get(SYSTEM_PROMPT_LABEL)).toBe(prompt);
    expect(await second.refreshSystemPrompt()).toBe(prompt);
    // Re-rendered once: the next cold start on the new configuration is clean.
    const again = vi.fn();
    const third = new ContextBlocks(
      build(store, changed).configs,
      new InMemoryContextProvider({ store }),
      null,
      {
        onDrift: again,
      },
    );
    expect(await third.freezeSystemPrompt()).toBe(prompt);
    expect(again).not.toHaveBeenCalled();
  });

  it('policy "keep": serves the stored prompt as it is, still reports, and refresh adopts the new configuration', async () => {
    const changed = [...BASE, { label: "todo" }];
    const { stored, prompt, onDrift, reads, second, store } = await coldStart(changed, { drift: "keep" });
    expect(prompt).toBe(stored);
    expect(onDrift).toHaveBeenCalledTimes(1);
    expect(onDrift.mock.calls[0]?.[0]).toContain('"todo"');
    expect(reads).not.toHaveBeenCalled();
    expect(await second.freezeSystemPrompt()).toBe(stored);
    const refreshed = await second.refreshSystemPrompt();
    expect(refreshed).toContain("TODO [writable]");
    expect(store.blocks.get(SYSTEM_PROMPT_LABEL)).toBe(refreshed);
  });

  it("the reason names the block that does not match", async () => {
    const { onDrift } = await coldStart([
      BASE[0] as Declaration,
      BASE[1] as Declaration,
      { label: "scratchpad" },
    ]);
    expect(onDrift.mock.calls[0]?.[0]).toContain('"scratchpad"');
  });

  it("without onDrift, the default warns on the console", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const store = new InMemoryStore();
    await new ContextBlocks(
      build(store, BASE).configs,
      new InMemoryContextProvider({ store }),
    ).freezeSystemPrompt();
    const second = new ContextBlocks(
      build(store, BASE.slice(1)).configs,
      new InMemoryContextProvider({ store }),
    );
    await second.freezeSystemPrompt();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toContain("contextblocks");
  });

  it("an empty read-only block that was skipped in the stored prompt is not drift", async () => {
    const store = new InMemoryStore();
    const configs = () => [
      { label: "empty", provider: readonlyProvider(null) },
      { label: "memory", provider: new InMemoryContextProvider({ store, label: "memory" }) },
    ];
    const stored = await new ContextBlocks(
      configs(),
      new InMemoryContextProvider({ store }),
    ).freezeSystemPrompt();
    const onDrift = vi.fn();
    const cold = configs();
    const second = new ContextBlocks(cold, new InMemoryContextProvider({ store }), null, { onDrift });
    expect(await second.freezeSystemPrompt()).toBe(stored);
    expect(onDrift).not.toHaveBeenCalled();
    expect(cold[0]?.provider.get).not.toHaveBeenCalled();
  });

  it("drift is checked on the cold path of reminder() too, which never writes; the next freeze re-renders", async () => {
    const store = new InMemoryStore();
    await new ContextBlocks(
      build(store, BASE).configs,
      new InMemoryContextProvider({ store }),
    ).freezeSystemPrompt();
    const onDrift = vi.fn();
    const second = new ContextBlocks(
      build(store, [...BASE, { label: "clock", kind: "readonly", whenChanged: "remind" }]).configs,
      new InMemoryContextProvider({ store }),
      null,
      { onDrift },
    );
    const before = store.blocks.get(SYSTEM_PROMPT_LABEL);
    // A read never writes: reminder() reports the drift and leaves the stored prompt alone.
    expect(await second.reminder()).toBeNull();
    expect(onDrift).toHaveBeenCalledTimes(1);
    expect(store.blocks.get(SYSTEM_PROMPT_LABEL)).toBe(before);
    // The explicit step, freezeSystemPrompt(), re-renders per the policy and stores the result.
    await second.freezeSystemPrompt();
    expect(store.blocks.get(SYSTEM_PROMPT_LABEL)).toContain("CLOCK [readonly]");
  });
});

describe("a plain prompt written by another system", () => {
  it("is read as it is, with no drift and no provider reads", async () => {
    const store = new InMemoryStore();
    store.blocks.set(SYSTEM_PROMPT_LABEL, "You are a helpful assistant. Answer briefly.");
    const onDrift = vi.fn();
    const { configs, reads } = build(store, BASE);
    const context = new ContextBlocks(configs, new InMemoryContextProvider({ store }), null, { onDrift });
    expect(await context.freezeSystemPrompt()).toBe("You are a helpful assistant. Answer briefly.");
    expect(onDrift).not.toHaveBeenCalled();
    expect(reads).not.toHaveBeenCalled();
  });

  it("an empty stored prompt is drift when the configuration has a block that always renders", async () => {
    const store = new InMemoryStore();
    store.blocks.set(SYSTEM_PROMPT_LABEL, "");
    const onDrift = vi.fn();
    const context = new ContextBlocks(
      build(store, BASE).configs,
      new InMemoryContextProvider({ store }),
      null,
      {
        onDrift,
      },
    );
    expect(await context.freezeSystemPrompt()).toContain("MEMORY (Facts learned about the user)");
    expect(onDrift).toHaveBeenCalledTimes(1);
  });
});

describe("detectDrift", () => {
  const memory = { label: "memory", kind: "writable" as const, whenChanged: "wait" as const };
  const rule = "═".repeat(46);

  it("is null for a prompt rendered from the configuration, whatever the usage numbers", () => {
    const prompt = `${rule}\nMEMORY (Facts) [73% — 730/1000 tokens] [writable]\n${rule}\ncontent`;
    expect(detectDrift(prompt, [{ ...memory, description: "Facts", maxTokens: 1_000 }])).toBeNull();
  });

  it("names what differs", () => {
    const prompt = `${rule}\nMEMORY [writable]\n${rule}\n`;
    expect(detectDrift(prompt, [{ ...memory, description: "Facts" }])).toContain('"memory"');
    expect(detectDrift(prompt, [])).toContain("MEMORY [writable]");
  });

  it("is not fooled by a description that contains usage-like text", () => {
    const description = "Budget [5% — 1/20 tokens]";
    const prompt = `${rule}\nMEMORY (${description}) [40% — 400/1000 tokens] [writable]\n${rule}\nx`;
    expect(detectDrift(prompt, [{ ...memory, description, maxTokens: 1_000 }])).toBeNull();
    expect(detectDrift(prompt, [{ ...memory, description, maxTokens: 2_000 }])).not.toBeNull();
  });
});
