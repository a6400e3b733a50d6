import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { contextTools, prepareContextTurn } from "../src/index.js";
import { prefixSnapshot } from "../src/test.js";
import { answer, createContext, createStore, scriptedModel } from "./helpers.js";

describe("contextTools", () => {
  it("gives each tool the blocks allow, with core's description and JSON Schema as the model receives them", async () => {
    const context = createContext(createStore());
    const tools = contextTools(context);
    expect(Object.keys(tools)).toEqual([
      "set_context",
      "edit_context",
      "search_context",
      "load_context",
      "unload_context",
    ]);

    const model = scriptedModel([answer("ok")]);
    await generateText({ model, prompt: "Hi", tools });
    const sent = model.doGenerateCalls[0]?.tools ?? [];
    const specs = context.toolSpecs();
    expect(sent).toEqual(
      specs.map((spec) => ({
        type: "function",
        name: spec.name,
        description: spec.description,
        inputSchema: spec.inputSchema,
      })),
    );
    const setContext = sent.find((definition) => definition.name === "set_context");
    expect(setContext).toMatchObject({
      inputSchema: {
        properties: {
          label: { enum: ["memory", "notes", "skills"] },
          action: { enum: ["replace", "append"] },
          metadata: { properties: { title: { type: "string" }, description: { type: "string" } } },
        },
        required: ["label", "content"],
      },
    });
    // prefixSnapshot serializes a ToolSet as the SDK sends it (ai 6 and 7 order the keys differently).
    expect((await prefixSnapshot({ tools })).tools).toEqual(
      (await prefixSnapshot({ prompt: [], tools: sent })).tools,
    );
    expect((await prefixSnapshot({ tools })).tools.map(([, json]) => JSON.parse(json))).toEqual(sent);
  });

  it("is empty when every block is read-only, and a turn then sends no tools", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: { get: async () => "You are kind." } },
      { label: "rules", provider: { get: async () => "Be brief." } },
    ]);
    expect(contextTools(context)).toEqual({});
    const model = scriptedModel([answer("ok")]);
    await generateText({ model, ...(await prepareContextTurn(context, [{ role: "user", content: "Hi" }])) });
    expect(model.doGenerateCalls[0]?.tools).toBeUndefined();
  });

  it("offers set_context and edit_context for plain writable blocks, and leaves out excluded tools", () => {
    const store = new InMemoryStore();
    const context = new ContextBlocks([
      { label: "memory", provider: new InMemoryContextProvider({ store }) },
    ]);
    expect(Object.keys(contextTools(context))).toEqual(["set_context", "edit_context"]);
    const readOnlyAgent = contextTools(createContext(createStore()), {
      exclude: ["set_context", "edit_context"],
    });
    expect(Object.keys(readOnlyAgent)).toEqual(["search_context", "load_context", "unload_context"]);
  });

  it("returns the same object for the same context and options until the configuration changes", async () => {
    const context = createContext(createStore());
    const tools = contextTools(context);
    expect(contextTools(context)).toBe(tools);
    expect(contextTools(context, { exclude: [] })).toBe(tools);
    expect(Object.isFrozen(tools)).toBe(true);
    expect(contextTools(context, { exclude: ["unload_context"] })).not.toBe(tools);

    await context.addBlock({
      label: "journal",
      provider: new InMemoryContextProvider({ store: new InMemoryStore() }),
    });
    const grown = contextTools(context);
    expect(grown).not.toBe(tools);
    expect(grown.set_context?.description).toContain('"journal"');
    expect(contextTools(context)).toBe(grown);
  });

  it("executes through core: a structured outcome, never a throw", async () => {
    const store = createStore();
    const context = createContext(store);
    const tools = contextTools(context);
    const options = { toolCallId: "t", messages: [] };
    expect(await tools.set_context?.execute?.({ label: "memory", content: "Hi." }, options)).toMatchObject({
      isError: false,
      text: expect.stringMatching(/^Written to memory\./),
    });
    expect(await tools.set_context?.execute?.(undefined, options)).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^Error: set_context expects an object of arguments/),
    });
    expect(store.blocks.get("memory")).toBe("Hi.");
  });

  it("maps an outcome to the model's output: error-text for errors, text otherwise (never by the words)", async () => {
    const { toolModelOutput } = await import("../src/tools.js");
    expect(toolModelOutput({ isError: true, text: "Error: nope" })).toEqual({
      type: "error-text",
      value: "Error: nope",
    });
    expect(toolModelOutput({ isError: false, text: "Error: a skill's own words" })).toEqual({
      type: "text",
      value: "Error: a skill's own words",
    });
  });
});
