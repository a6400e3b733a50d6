// Scenarios of cloudflare/agents' search tests (packages/agents/src/tests/experimental/memory/session/
// search.test.ts), written for contextblocks and run through the compatibility entry.
import { ContextBlocks } from "@contextblocks/agents/experimental/memory/session";
import { describe, expect, it } from "vitest";
import { call, fixed, noteMap } from "./providers.js";

async function loaded(configs: ConstructorParameters<typeof ContextBlocks>[0]) {
  const blocks = new ContextBlocks(configs);
  await blocks.load();
  return { blocks, tools: await blocks.tools() };
}

describe("which tools a search block brings", () => {
  it("a writable search block: search_context and set_context", async () => {
    const { tools } = await loaded([{ label: "knowledge", provider: noteMap() }]);
    expect(tools).toHaveProperty("search_context");
    expect(tools).toHaveProperty("set_context");
  });
  it("no search block: no search_context", async () => {
    expect((await loaded([{ label: "soul", provider: fixed("identity") }])).tools).not.toHaveProperty(
      "search_context",
    );
  });
  it("a read-only search block: search_context without set_context", async () => {
    const { tools } = await loaded([{ label: "docs", provider: noteMap({ readme: "Hello" }, true) }]);
    expect(tools).toHaveProperty("search_context");
    expect(tools).not.toHaveProperty("set_context");
  });
});

describe("search blocks in the prompt", () => {
  it("a [searchable] header with the description", async () => {
    const { blocks } = await loaded([
      { label: "knowledge", description: "Harbour rules", provider: noteMap({ r1: "No wake" }, true) },
    ]);
    const prompt = blocks.toSystemPrompt();
    for (const word of ["KNOWLEDGE", "[searchable]", "Harbour rules"]) expect(prompt).toContain(word);
  });
  it("renders while empty", async () => {
    const prompt = (await loaded([{ label: "knowledge", provider: noteMap() }])).blocks.toSystemPrompt();
    expect(prompt).toContain("KNOWLEDGE");
    expect(prompt).toContain("[searchable]");
  });
});

describe("search_context", () => {
  it("answers the matching entries with their keys", async () => {
    const notes = noteMap(
      { tides: "High tide at six in the evening", fees: "Mooring costs ten a night" },
      true,
    );
    const { tools } = await loaded([{ label: "knowledge", provider: notes }]);
    const answer = await call(tools, "search_context", { label: "knowledge", query: "tide" });
    expect(answer).toContain("tides");
    expect(answer).toContain("six in the evening");
  });
  it("says No results when nothing matches", async () => {
    const { tools } = await loaded([{ label: "knowledge", provider: noteMap({ a: "Hello" }, true) }]);
    expect(await call(tools, "search_context", { label: "knowledge", query: "absent" })).toContain(
      "No results",
    );
  });
});

describe("set_context on a search block", () => {
  it("indexes an entry that search then finds", async () => {
    const { tools } = await loaded([{ label: "knowledge", provider: noteMap() }]);
    expect(
      await call(tools, "set_context", { label: "knowledge", content: "The regatta is on Saturday" }),
    ).toContain("Indexed");
    expect(await call(tools, "search_context", { label: "knowledge", query: "regatta" })).toContain(
      "Saturday",
    );
  });
  it("makes a key when none is given", async () => {
    const { tools } = await loaded([{ label: "knowledge", provider: noteMap() }]);
    expect(await call(tools, "set_context", { label: "knowledge", content: "keyless" })).toContain("Indexed");
  });
  it("refreshes the block's summary", async () => {
    const { blocks, tools } = await loaded([{ label: "knowledge", provider: noteMap() }]);
    expect(blocks.getBlock("knowledge")?.content).toBe("");
    await call(tools, "set_context", { label: "knowledge", content: "Gulls nest on the breakwater" });
    expect(blocks.getBlock("knowledge")?.content).toContain("1 entries");
  });
});
