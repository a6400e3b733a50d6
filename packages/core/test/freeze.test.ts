import { describe, expect, it, vi } from "vitest";
import { ContextBlocks, type ContextConfig, type ContextError, SYSTEM_PROMPT_LABEL } from "../src/index.js";
import { InMemoryContextProvider, InMemorySearchProvider, InMemoryStore } from "../src/memory/index.js";
import { deferred, RecordingProvider, readonlyProvider, rejection, settle } from "./helpers.js";

/** A prompt store over a shared InMemoryStore, with spies on get and set. */
function spiedStore(store: InMemoryStore) {
  const provider = new InMemoryContextProvider({ store });
  const get = vi.spyOn(provider, "get");
  // A cold start reads the prompt with its configuration fingerprint (the store keeps one).
  const getWithFingerprint = vi.spyOn(provider, "getWithFingerprint");
  return {
    provider,
    /** Reads of the stored prompt, either way. */
    reads: () => get.mock.calls.length + getWithFingerprint.mock.calls.length,
    set: vi.spyOn(provider, "set"),
  };
}

/** The same block configuration as a fresh process would declare it, with spied providers. */
function configsOn(store: InMemoryStore) {
  const soul = readonlyProvider("You are a helpful assistant.");
  const memory = new InMemoryContextProvider({ store, label: "memory" });
  const knowledge = new InMemorySearchProvider({ store, label: "knowledge" });
  const spies = [soul.get, vi.spyOn(memory, "get"), vi.spyOn(knowledge, "get")];
  const configs: ContextConfig[] = [
    { label: "soul", provider: soul },
    { label: "memory", description: "Facts learned about the user", maxTokens: 1_100, provider: memory },
    { label: "knowledge", provider: knowledge },
  ];
  return { configs, spies, memory };
}

describe("freezeSystemPrompt", () => {
  it("renders a first freeze from what this instance already read or wrote, reading only the rest", async () => {
    const memory = new RecordingProvider("Likes tea.");
    const soul = readonlyProvider("You are a helpful assistant.");
    const context = new ContextBlocks([
      { label: "soul", provider: soul },
      { label: "memory", provider: memory },
    ]);
    await context.setBlock("memory", "Likes coffee.");
    const prompt = await context.freezeSystemPrompt();
    expect(prompt).toContain("Likes coffee.");
    expect(memory.get).not.toHaveBeenCalled();
    expect(soul.get).toHaveBeenCalledTimes(1);
  });

  it("counts tokens again only for content that changed", async () => {
    const tokenCounter = vi.fn((text: string) => text.length);
    const memory = new RecordingProvider("Likes tea.");
    const soul = readonlyProvider("You are a helpful assistant.");
    const context = new ContextBlocks(
      [
        { label: "soul", provider: soul },
        { label: "memory", maxTokens: 100, provider: memory },
      ],
      null,
      null,
      { tokenCounter },
    );
    await context.freezeSystemPrompt();
    const counted = tokenCounter.mock.calls.length;
    await context.refreshSystemPrompt();
    expect(tokenCounter).toHaveBeenCalledTimes(counted);
    memory.value = "Likes coffee now.";
    expect(await context.refreshSystemPrompt()).toContain("[17% — 17/100 tokens]");
    expect(tokenCounter.mock.calls.map(([text]) => text).slice(counted)).toEqual(["Likes coffee now."]);
  });

  it("reads a block again at the first freeze when this instance only read it before", async () => {
    const notes = new RecordingProvider(null);
    const context = new ContextBlocks([{ label: "notes", provider: { get: notes.get } }]);
    await context.load();
    notes.value = "Seeded after load().";
    expect(await context.freezeSystemPrompt()).toContain("Seeded after load().");
  });

  it("refreshSystemPrompt re-reads every block, even ones this instance wrote", async () => {
    const memory = new RecordingProvider("Likes tea.");
    const context = new ContextBlocks([{ label: "memory", provider: memory }]);
    await context.setBlock("memory", "Likes coffee.");
    memory.value = "Written by another process.";
    expect(await context.refreshSystemPrompt()).toContain("Written by another process.");
    expect(memory.get).toHaveBeenCalledTimes(1);
  });

  it("renders once and returns the identical string on every later call", async () => {
    const provider = new RecordingProvider("Likes tea.");
    const context = new ContextBlocks([{ label: "memory", provider }]);
    const first = await context.freezeSystemPrompt();
    provider.value = "Likes coffee.";
    const second = await context.freezeSystemPrompt();
    expect(second).toBe(first);
    expect(second).toContain("Likes tea.");
    expect(provider.get).toHaveBeenCalledTimes(1);
  });

  it("parallel first calls render once", async () => {
    const provider = new RecordingProvider("x");
    const store = new RecordingProvider();
    const context = new ContextBlocks([{ label: "memory", provider }], store);
    const prompts = await Promise.all([
      context.freezeSystemPrompt(),
      context.freezeSystemPrompt(),
      context.freezeSystemPrompt(),
    ]);
    expect(new Set(prompts).size).toBe(1);
    expect(provider.get).toHaveBeenCalledTimes(1);
    expect(store.set).toHaveBeenCalledTimes(1);
  });

  it("setBlock and appendToBlock write to the provider at once but never change the frozen prompt", async () => {
    const provider = new RecordingProvider("original");
    const store = new RecordingProvider();
    const context = new ContextBlocks([{ label: "memory", provider }], store);
    const frozen = await context.freezeSystemPrompt();
    await context.setBlock("memory", "replaced");
    await context.appendToBlock("memory", "appended");
    expect(provider.value).toBe("replaced\nappended");
    expect(await context.freezeSystemPrompt()).toBe(frozen);
    expect(store.value).toBe(frozen);
    expect(context.getBlock("memory")?.content).toBe("replaced\nappended");
  });

  it("refreshSystemPrompt reloads every provider, re-renders and overwrites the stored prompt", async () => {
    const memory = new RecordingProvider("old");
    const soul = readonlyProvider("soul");
    const store = new RecordingProvider();
    const context = new ContextBlocks(
      [
        { label: "soul", provider: soul },
        { label: "memory", provider: memory },
      ],
      store,
    );
    const frozen = await context.freezeSystemPrompt();
    memory.value = "changed elsewhere";
    const refreshed = await context.refreshSystemPrompt();
    expect(refreshed).not.toBe(frozen);
    expect(refreshed).toContain("changed elsewhere");
    expect(store.value).toBe(refreshed);
    expect(store.writes).toEqual([frozen, refreshed]);
    expect(soul.get).toHaveBeenCalledTimes(2);
    expect(await context.freezeSystemPrompt()).toBe(refreshed);
  });

  it("works without a prompt store: nothing is persisted, the snapshot lives in the instance", async () => {
    const provider = new RecordingProvider("x");
    const first = new ContextBlocks([{ label: "memory", provider }]);
    const prompt = await first.freezeSystemPrompt();
    provider.value = "y";
    const second = new ContextBlocks([{ label: "memory", provider }]);
    expect(await second.freezeSystemPrompt()).not.toBe(prompt);
  });

  it("surfaces a failing provider read as PROVIDER_FAILED and freezes nothing", async () => {
    let fail = true;
    const provider = {
      get: vi.fn(async () => {
        if (fail) throw new Error("timeout");
        return "ok";
      }),
    };
    const store = new RecordingProvider();
    const context = new ContextBlocks([{ label: "soul", provider }], store);
    const error = (await rejection(context.freezeSystemPrompt())) as ContextError;
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toContain('"soul"');
    expect(store.set).not.toHaveBeenCalled();
    fail = false;
    expect(await context.freezeSystemPrompt()).toContain("ok");
  });

  it("refuses a provider get() that returns something other than a string", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: { get: async () => 42 as unknown as string } },
    ]);
    const error = (await rejection(context.freezeSystemPrompt())) as ContextError;
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toContain("number 42");
  });

  it("reads a get() that returns undefined as no content, as agents/context does", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: { get: async () => undefined as unknown as null } },
      { label: "memory", provider: { get: async () => undefined as unknown as null, set: async () => {} } },
    ]);
    expect(await context.freezeSystemPrompt()).not.toContain("SOUL");
    expect(context.getBlock("memory")?.content).toBe("");
  });
});

describe("a cold start on a shared store", () => {
  it("returns the stored prompt byte for byte without calling any block provider's get", async () => {
    const store = new InMemoryStore();
    const warm = configsOn(store);
    const first = new ContextBlocks(warm.configs, new InMemoryContextProvider({ store }));
    await first.setBlock("memory", "Prefers TypeScript.");
    const frozen = await first.freezeSystemPrompt();
    // Block content moves on after the freeze; the restarted agent must still serve the cached string.
    await first.setBlock("memory", "Prefers TypeScript.\nLives in Lisbon.");

    const cold = configsOn(store);
    const prompts = spiedStore(store);
    const second = new ContextBlocks(cold.configs, prompts.provider);
    const restarted = await second.freezeSystemPrompt();
    expect(restarted).toBe(frozen);
    for (const spy of cold.spies) expect(spy).not.toHaveBeenCalled();
    expect(prompts.reads()).toBe(1);
    expect(prompts.set).not.toHaveBeenCalled();
  });

  it("stores the prompt under the system prompt label", async () => {
    const store = new InMemoryStore();
    const context = new ContextBlocks(configsOn(store).configs, new InMemoryContextProvider({ store }));
    const prompt = await context.freezeSystemPrompt();
    expect(store.blocks.get(SYSTEM_PROMPT_LABEL)).toBe(prompt);
  });

  it("a warm call makes no store read and no store write", async () => {
    const store = new InMemoryStore();
    const prompts = spiedStore(store);
    const context = new ContextBlocks(configsOn(store).configs, prompts.provider);
    const first = await context.freezeSystemPrompt();
    const reads = prompts.reads();
    const writes = prompts.set.mock.calls.length;
    for (let turn = 0; turn < 5; turn++) expect(await context.freezeSystemPrompt()).toBe(first);
    expect(prompts.reads()).toBe(reads);
    expect(prompts.set).toHaveBeenCalledTimes(writes);
  });

  it("a warm call after a cold start makes no store read either", async () => {
    const store = new InMemoryStore();
    await new ContextBlocks(
      configsOn(store).configs,
      new InMemoryContextProvider({ store }),
    ).freezeSystemPrompt();
    const prompts = spiedStore(store);
    const context = new ContextBlocks(configsOn(store).configs, prompts.provider);
    await context.freezeSystemPrompt();
    await context.freezeSystemPrompt();
    await context.freezeSystemPrompt();
    expect(prompts.reads()).toBe(1);
  });

  it("an empty prompt is stored, and on a cold start it is a hit, not a miss", async () => {
    const store = new InMemoryStore();
    const configs = () => [
      { label: "soul", provider: readonlyProvider(null) },
      { label: "rules", provider: readonlyProvider("") },
    ];
    const first = new ContextBlocks(configs(), new InMemoryContextProvider({ store }));
    expect(await first.freezeSystemPrompt()).toBe("");
    expect(store.blocks.get(SYSTEM_PROMPT_LABEL)).toBe("");

    const cold = configs();
    const prompts = spiedStore(store);
    const second = new ContextBlocks(cold, prompts.provider);
    expect(await second.freezeSystemPrompt()).toBe("");
    expect(cold[0]?.provider.get).not.toHaveBeenCalled();
    expect(cold[1]?.provider.get).not.toHaveBeenCalled();
    expect(prompts.set).not.toHaveBeenCalled();
  });

  it("a cold start whose store is empty renders from the providers and persists", async () => {
    const store = new InMemoryStore();
    const prompts = spiedStore(store);
    const { configs, spies } = configsOn(store);
    const context = new ContextBlocks(configs, prompts.provider);
    const prompt = await context.freezeSystemPrompt();
    for (const spy of spies) expect(spy).toHaveBeenCalledTimes(1);
    expect(prompts.set).toHaveBeenCalledWith(prompt, { fingerprint: expect.stringMatching(/^cb1\./) });
  });

  it("refresh after a cold start overwrites the store, and the next cold start serves the new prompt", async () => {
    const store = new InMemoryStore();
    const first = new ContextBlocks(configsOn(store).configs, new InMemoryContextProvider({ store }));
    const frozen = await first.freezeSystemPrompt();
    await first.setBlock("memory", "New fact.");

    const second = new ContextBlocks(configsOn(store).configs, new InMemoryContextProvider({ store }));
    expect(await second.freezeSystemPrompt()).toBe(frozen);
    const refreshed = await second.refreshSystemPrompt();
    expect(refreshed).toContain("New fact.");

    const third = new ContextBlocks(configsOn(store).configs, new InMemoryContextProvider({ store }));
    expect(await third.freezeSystemPrompt()).toBe(refreshed);
  });

  it("a slow prompt store read is shared by parallel cold calls", async () => {
    const gate = deferred();
    const store = new RecordingProvider("stored prompt");
    const slowGet = vi.fn(async () => {
      await gate.promise;
      return store.value;
    });
    const context = new ContextBlocks([], { get: slowGet, set: store.set });
    const calls = [context.freezeSystemPrompt(), context.freezeSystemPrompt()];
    await settle();
    gate.resolve();
    expect(await Promise.all(calls)).toEqual(["stored prompt", "stored prompt"]);
    expect(slowGet).toHaveBeenCalledTimes(1);
  });
});
