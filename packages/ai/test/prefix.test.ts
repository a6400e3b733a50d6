import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { jsonSchema, type ModelMessage, tool } from "ai";
import { describe, expect, it } from "vitest";
import { contextTools, prepareContextTurn } from "../src/index.js";
import { assertStablePrefix, comparePrefix } from "../src/test.js";
import { createContext, createStore } from "./helpers.js";

describe("comparePrefix", () => {
  it("says identical for two turns of the same context, with writes in between", async () => {
    const context = createContext(createStore());
    const history: ModelMessage[] = [{ role: "user", content: "a" }];
    const first = await prepareContextTurn(context, history);
    await context.setBlock("memory", "changed");
    history.push({ role: "assistant", content: "ok" }, { role: "user", content: "b" });
    const second = await prepareContextTurn(context, history);
    const comparison = await comparePrefix(first, second);
    expect(comparison).toMatchObject({
      identical: true,
      system: { identical: true, changedBlocks: [] },
      tools: { identical: true, changed: [], added: [], removed: [], reordered: false },
      messages: { sharedPrefix: 1, previousCount: 1 },
    });
    expect(comparison.message).toBe("Prefix stable: system prompt and tool definitions are byte-identical.");
  });

  it("names the blocks whose sections changed (header labels, or real labels given the context)", async () => {
    const store = createStore();
    const context = createContext(store);
    const before = { system: await context.freezeSystemPrompt() };
    await context.setBlock("memory", "Name: Ada.");
    const after = { system: await context.refreshSystemPrompt() };

    const bare = await comparePrefix(before, after);
    expect(bare.system).toEqual({ identical: false, changedBlocks: ["MEMORY"] });
    expect(bare.tools.identical).toBe(true);
    const named = await comparePrefix(before, after, { context });
    expect(named.system.changedBlocks).toEqual(["memory"]);
    expect(named.message).toBe(
      "Prefix changed (the provider's prompt cache is lost from the first changed byte on):\n- system prompt: blocks changed: memory",
    );
  });

  it("reports added and removed blocks, and changes outside sections", async () => {
    const store = new InMemoryStore();
    const one = new ContextBlocks([
      { label: "a", provider: new InMemoryContextProvider({ store }) },
      { label: "b", description: "second (of two)", provider: new InMemoryContextProvider({ store }) },
    ]);
    const two = new ContextBlocks([
      { label: "a", provider: new InMemoryContextProvider({ store }) },
      { label: "c", provider: new InMemoryContextProvider({ store }) },
    ]);
    const comparison = await comparePrefix(
      { system: await one.freezeSystemPrompt() },
      { system: await two.freezeSystemPrompt() },
    );
    expect(comparison.system.changedBlocks).toEqual(["B", "C"]);
    const plain = await comparePrefix({ system: "You are kind." }, { system: "You are kind!" });
    expect(plain.system.changedBlocks).toEqual([]);
    expect(plain.message).toContain("changed outside block sections");
  });

  it("names changed, added, removed and reordered tools", async () => {
    const context = createContext(createStore());
    const tools = contextTools(context);
    const extra = tool({
      description: "Weather",
      inputSchema: jsonSchema({ type: "object" }),
      execute: async () => "",
    });
    const { search_context: search, ...withoutSearch } = tools;
    const search_context = search!;
    const changedSet = {
      ...tools,
      set_context: { ...tools.set_context, description: `${tools.set_context?.description} Be brief.` },
    };

    const comparison = await comparePrefix({ tools }, { tools: { ...withoutSearch, weather: extra } });
    expect(comparison.tools).toMatchObject({
      identical: false,
      added: ["weather"],
      removed: ["search_context"],
    });
    expect(comparison.tools.changed.sort()).toEqual(["search_context", "weather"]);
    expect(comparison.message).toContain("- tools: added: weather");
    expect(comparison.message).toContain("- tools: removed: search_context");

    const edited = await comparePrefix({ tools }, { tools: changedSet as typeof tools });
    expect(edited.tools.changed).toEqual(["set_context"]);
    expect(edited.message).toContain("- tools: definitions changed: set_context");

    const reordered = await comparePrefix({ tools }, { tools: { search_context, ...withoutSearch } });
    expect(reordered.tools).toMatchObject({ identical: false, changed: [], reordered: true });
    await expect(
      assertStablePrefix({ tools }, { tools: { search_context, ...withoutSearch } }),
    ).rejects.toThrow("same definitions in a different order");
  });
});
