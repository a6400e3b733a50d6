import { describe, expect, it, vi } from "vitest";
import { ContextBlocks, type ContextError } from "../src/index.js";
import { RecordingProvider, readonlyProvider, rejection } from "./helpers.js";

describe("runtime blocks: addBlock, removeBlock, getBlock, getBlocks", () => {
  it("getBlock is null and getBlocks empty before anything is read; load() reads all", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: readonlyProvider("Be kind.") },
      { label: "memory", description: "Facts", maxTokens: 100, provider: new RecordingProvider("tea") },
    ]);
    expect(context.getBlock("soul")).toBeNull();
    expect(context.getBlocks()).toEqual([]);
    await context.load();
    expect(context.getBlocks().map((block) => block.label)).toEqual(["soul", "memory"]);
    expect(context.getBlock("memory")).toEqual({
      label: "memory",
      description: "Facts",
      content: "tea",
      tokens: context.estimateTokens("tea"),
      maxTokens: 100,
      kind: "writable",
      whenChanged: "wait",
      writable: true,
      isSearchable: false,
      isSkill: false,
    });
    expect(context.getBlock("unknown")).toBeNull();
  });

  it("getBlock returns a copy: changing it changes nothing inside", async () => {
    const context = new ContextBlocks([{ label: "memory", provider: new RecordingProvider("tea") }]);
    await context.load();
    const block = context.getBlock("memory");
    if (!block) throw new Error("no block");
    block.content = "tampered";
    expect(context.getBlock("memory")?.content).toBe("tea");
    const all = context.getBlocks();
    (all[0] as { content: string }).content = "tampered";
    expect(context.getBlocks()[0]?.content).toBe("tea");
  });

  it("addBlock reads the new block, puts it last, and leaves the frozen prompt alone until a refresh", async () => {
    const store = new RecordingProvider();
    const context = new ContextBlocks([{ label: "soul", provider: readonlyProvider("Be kind.") }], store);
    const frozen = await context.freezeSystemPrompt();
    const provider = new RecordingProvider("extension data");
    const block = await context.addBlock({ label: "extension", description: "Added at runtime", provider });
    expect(block).toMatchObject({ label: "extension", content: "extension data", kind: "writable" });
    expect(provider.init).toHaveBeenCalledWith("extension");
    expect(context.getBlocks().map((entry) => entry.label)).toEqual(["soul", "extension"]);
    expect(await context.freezeSystemPrompt()).toBe(frozen);
    expect(store.value).toBe(frozen);
    await context.setBlock("extension", "written");
    expect(provider.value).toBe("written");
    const refreshed = await context.refreshSystemPrompt();
    expect(refreshed).toMatch(
      /SOUL \[readonly\][\s\S]*EXTENSION \(Added at runtime\) \[writable\][\s\S]*written$/,
    );
    expect(store.value).toBe(refreshed);
  });

  it("addBlock refuses a label that exists, and invalid configs, with INVALID_CONFIG", async () => {
    const context = new ContextBlocks([{ label: "memory", provider: new RecordingProvider() }]);
    for (const config of [
      { label: "memory", provider: new RecordingProvider() },
      { label: "MEMORY", provider: new RecordingProvider() },
      { label: "" },
      { label: "x", maxTokens: -1 },
    ]) {
      const error = (await rejection(context.addBlock(config))) as ContextError;
      expect(error.code).toBe("INVALID_CONFIG");
    }
    expect(context.getConfigs().map((config) => config.label)).toEqual(["memory"]);
  });

  it("addBlock wires a block without a provider to the default provider", async () => {
    const defaultProvider = vi.fn((label: string) => new RecordingProvider(`default for ${label}`));
    const context = new ContextBlocks([], null, defaultProvider);
    const block = await context.addBlock({ label: "notes" });
    expect(defaultProvider).toHaveBeenCalledWith("notes");
    expect(block.content).toBe("default for notes");
  });

  it("addBlock whose provider fails to read is not added", async () => {
    const context = new ContextBlocks([]);
    const error = (await rejection(
      context.addBlock({
        label: "broken",
        provider: {
          get: async () => {
            throw new Error("offline");
          },
        },
      }),
    )) as ContextError;
    expect(error.code).toBe("PROVIDER_FAILED");
    expect(context.getConfigs()).toEqual([]);
    expect(context.getBlock("broken")).toBeNull();
  });

  it("removeBlock drops the block, returns false for an unknown one, and leaves the frozen prompt alone", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: readonlyProvider("Be kind.") },
      { label: "memory", provider: new RecordingProvider("tea") },
    ]);
    const frozen = await context.freezeSystemPrompt();
    expect(context.removeBlock("memory")).toBe(true);
    expect(context.removeBlock("memory")).toBe(false);
    expect(context.getBlock("memory")).toBeNull();
    expect(context.getBlocks().map((block) => block.label)).toEqual(["soul"]);
    expect(await context.freezeSystemPrompt()).toBe(frozen);
    const error = (await rejection(context.setBlock("memory", "x"))) as ContextError;
    expect(error.code).toBe("NOT_FOUND");
    expect(await context.refreshSystemPrompt()).not.toContain("MEMORY");
  });

  it("a removed block can be added again", async () => {
    const context = new ContextBlocks([{ label: "memory", provider: new RecordingProvider("one") }]);
    context.removeBlock("memory");
    const block = await context.addBlock({ label: "memory", provider: new RecordingProvider("two") });
    expect(block.content).toBe("two");
  });

  it("removeBlock forgets entries loaded from that block", async () => {
    const context = new ContextBlocks([
      { label: "skills", provider: { get: async () => "- a", load: async () => "skill a" } },
    ]);
    await context.loadEntry("skills", "a");
    expect(context.loadedEntries()).toHaveLength(1);
    context.removeBlock("skills");
    expect(context.loadedEntries()).toEqual([]);
  });

  it("getConfigs reports the resolved configuration, with defaults filled in", () => {
    const provider = new RecordingProvider();
    const context = new ContextBlocks([{ label: "memory", provider, whenChanged: "remind", maxTokens: 5 }]);
    expect(context.getConfigs()).toEqual([
      { label: "memory", provider, whenChanged: "remind", maxTokens: 5, kind: "writable", writable: true },
    ]);
    expect(new ContextBlocks([{ label: "x" }]).getConfigs()[0]?.whenChanged).toBe("wait");
  });
});
