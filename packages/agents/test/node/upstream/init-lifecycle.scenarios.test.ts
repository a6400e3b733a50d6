// Scenarios of cloudflare/agents' init-lifecycle tests (packages/agents/src/tests/experimental/memory/
// session/init-lifecycle.test.ts), written for contextblocks and run through the compatibility entry.
import { ContextBlocks, type ContextProvider } from "@contextblocks/agents/experimental/memory/session";
import { describe, expect, it } from "vitest";
import { call, noteMap, skillMap, variable } from "./providers.js";

/** Adds an `init(label)` that records its calls (in `calls`, shared when given). */
function withInit<T extends ContextProvider>(provider: T, calls: string[] = []) {
  return Object.assign(provider, {
    calls,
    init(label: string) {
      calls.push(`init:${label}`);
    },
  });
}

const load = async (configs: ConstructorParameters<typeof ContextBlocks>[0]) => {
  const blocks = new ContextBlocks(configs);
  await blocks.load();
  return blocks;
};

describe("init(label)", () => {
  it.each([
    ["read-only", () => withInit({ get: async () => "x" }), "soul"],
    ["writable", () => withInit(variable()), "memory"],
    ["skill", () => withInit(skillMap()), "skills"],
    ["search", () => withInit(noteMap()), "knowledge"],
  ] as const)("is called on a %s provider with its label", async (_kind, make, label) => {
    const provider = make();
    await load([{ label, provider }]);
    expect(provider.calls).toEqual([`init:${label}`]);
  });
  it("comes before the first get", async () => {
    const order: string[] = [];
    const get = async () => {
      order.push("get");
      return "x";
    };
    const provider = withInit({ get }, order);
    await load([{ label: "first", provider }]);
    expect(order).toEqual(["init:first", "get"]);
  });
  it("gives each block its own label", async () => {
    const calls: string[] = [];
    await load([
      { label: "soul", provider: withInit({ get: async () => "x" }, calls) },
      { label: "memory", provider: withInit(variable(), calls) },
      { label: "knowledge", provider: withInit(noteMap(), calls) },
    ]);
    expect(calls.sort()).toEqual(["init:knowledge", "init:memory", "init:soul"]);
  });
  it("is optional: providers without it read and write", async () => {
    const blocks = await load([
      { label: "fixed", provider: { get: async () => "constant" } },
      { label: "notes", provider: variable() },
    ]);
    expect(blocks.getBlock("fixed")?.content).toBe("constant");
    expect(await blocks.tools()).toHaveProperty("set_context");
  });
  it("runs once however many times tools() is asked for", async () => {
    const provider = withInit(variable());
    const blocks = await load([{ label: "memory", provider }]);
    await blocks.tools();
    await blocks.tools();
    expect(provider.calls).toEqual(["init:memory"]);
  });
  it("lets get() use the label", async () => {
    let label = "";
    const provider = Object.assign(
      { get: async () => `content for ${label}` },
      {
        init: (given: string) => {
          label = given;
        },
      },
    );
    expect((await load([{ label: "my-block", provider }])).getBlock("my-block")?.content).toBe(
      "content for my-block",
    );
  });
  it("a search provider indexed under its label is searchable through the tools (an extra `key` argument is ignored)", async () => {
    const provider = withInit(noteMap());
    const blocks = await load([{ label: "docs", provider }]);
    expect(provider.calls).toEqual(["init:docs"]);
    const tools = await blocks.tools();
    await call(tools, "set_context", { label: "docs", key: "readme", content: "Hello world" });
    expect(await call(tools, "search_context", { label: "docs", query: "hello" })).toContain("Hello world");
  });
});
