import { describe, expect, it, vi } from "vitest";
import { ContextBlocks, type ContextError, type WritableContextProvider } from "../src/index.js";
import type { SyncReadableProvider } from "../src/store-kit.js";
import { deferred, settle } from "./helpers.js";

/**
 * A writable provider over a plain variable that can also read synchronously (`getSync`), as the SQLite
 * stores on better-sqlite3 and Durable Objects do. `answer: "later"` makes `getSync` decline (`undefined`).
 */
class SyncProvider implements SyncReadableProvider, WritableContextProvider {
  readonly calls: string[] = [];
  constructor(
    public value: string | null,
    private readonly answer: "now" | "later" = "now",
  ) {}
  readonly init = vi.fn((label: string) => {
    this.calls.push(`init ${label}`);
  });
  readonly getSync = vi.fn(() => {
    this.calls.push("getSync");
    return this.answer === "now" ? this.value : undefined;
  });
  readonly get = vi.fn(async () => {
    this.calls.push("get");
    return this.value;
  });
  readonly set = vi.fn(async (content: string) => {
    this.calls.push("set");
    this.value = content;
  });
}

async function storedPrompt(configs: () => { label: string; provider: SyncProvider }[]) {
  const store = new SyncProvider(null);
  await new ContextBlocks(configs(), store).freezeSystemPrompt();
  return store.value as string;
}

describe("providers that read synchronously (getSync)", () => {
  it("a cold start adopts the stored prompt through getSync, after init, and never awaits get", async () => {
    const blocks = () => [{ label: "memory", provider: new SyncProvider("Likes tea.") }];
    const prompt = await storedPrompt(blocks);
    const store = new SyncProvider(prompt);
    const context = new ContextBlocks(blocks(), store);
    await expect(context.freezeSystemPrompt()).resolves.toBe(prompt);
    expect(store.calls).toEqual(["init _system_prompt", "getSync"]);
    expect(store.get).not.toHaveBeenCalled();
  });

  it("still checks the stored prompt for drift: a changed configuration renders again", async () => {
    const prompt = await storedPrompt(() => [{ label: "memory", provider: new SyncProvider("Likes tea.") }]);
    const store = new SyncProvider(prompt);
    const onDrift = vi.fn();
    const context = new ContextBlocks(
      [{ label: "memory", description: "Facts", provider: new SyncProvider("Likes tea.") }],
      store,
      null,
      { onDrift },
    );
    const rendered = await context.freezeSystemPrompt();
    expect(onDrift).toHaveBeenCalledOnce();
    expect(rendered).not.toBe(prompt);
    expect(rendered).toContain("MEMORY (Facts)");
    expect(store.value).toBe(rendered);
  });

  it("falls back to get when getSync declines (undefined)", async () => {
    const prompt = await storedPrompt(() => [{ label: "memory", provider: new SyncProvider("Likes tea.") }]);
    const store = new SyncProvider(prompt, "later");
    const context = new ContextBlocks([{ label: "memory", provider: new SyncProvider("Likes tea.") }], store);
    await expect(context.freezeSystemPrompt()).resolves.toBe(prompt);
    expect(store.calls).toEqual(["init _system_prompt", "getSync", "get"]);
  });

  it("a getSync that throws fails the freeze with PROVIDER_FAILED naming the store", async () => {
    const store = new SyncProvider("x");
    store.getSync.mockImplementation(() => {
      throw new Error("disk on fire");
    });
    const context = new ContextBlocks([{ label: "memory", provider: new SyncProvider("") }], store);
    const error = (await context.freezeSystemPrompt().catch((caught: unknown) => caught)) as ContextError;
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(error.message).toContain('"_system_prompt"');
    expect(error.message).toContain("disk on fire");
  });

  it("a first freeze and a refresh read every block through getSync", async () => {
    const memory = new SyncProvider("Likes tea.");
    const soul = new SyncProvider("You are helpful.");
    const context = new ContextBlocks(
      [
        { label: "soul", provider: soul },
        { label: "memory", provider: memory },
      ],
      new SyncProvider(null),
    );
    expect(await context.freezeSystemPrompt()).toContain("Likes tea.");
    memory.value = "Likes coffee.";
    expect(await context.refreshSystemPrompt()).toContain("Likes coffee.");
    expect(memory.get).not.toHaveBeenCalled();
    expect(soul.get).not.toHaveBeenCalled();
    expect(memory.getSync).toHaveBeenCalledTimes(2);
  });

  it("a read while a write of the block is in flight waits for the write, then reads synchronously", async () => {
    const memory = new SyncProvider("old");
    const written = deferred();
    memory.set.mockImplementation(async (content: string) => {
      memory.calls.push("set");
      await written.promise;
      memory.value = content;
    });
    const context = new ContextBlocks([{ label: "memory", provider: memory }]);
    const writing = context.setBlock("memory", "new");
    await settle();
    const loading = context.load();
    await settle();
    expect(memory.getSync).not.toHaveBeenCalled();
    written.resolve();
    await writing;
    await loading;
    expect(memory.calls).toEqual(["init memory", "set", "getSync"]);
    expect(context.getBlock("memory")?.content).toBe("new");
  });

  it("a getSync answer that is not a string fails the read with PROVIDER_FAILED", async () => {
    const memory = new SyncProvider(null);
    memory.getSync.mockImplementation(() => 42 as unknown as string);
    const context = new ContextBlocks([{ label: "memory", provider: memory }]);
    await expect(context.load()).rejects.toMatchObject({ code: "PROVIDER_FAILED" });
  });
});
