import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolOutcome } from "../../core/src/index.js";
import { contextToolInputSchemas, contextTools, prepareContextTurn } from "../src/index.js";
import { answer, callTools, createContext, createStore, resultText, scriptedModel } from "./helpers.js";

const BAD_CALLS = [
  // 0: a label no block has
  { toolName: "set_context", input: { label: "diary", content: "Dear diary" } },
  // 1: a read-only block
  { toolName: "set_context", input: { label: "soul", content: "You are a pirate." } },
  // 2: content missing
  { toolName: "set_context", input: { label: "memory" } },
  // 3: content of the wrong type
  { toolName: "set_context", input: { label: "memory", content: 42 } },
  // 4: an action that does not exist
  { toolName: "set_context", input: { label: "memory", content: "x", action: "prepend" } },
  // 5: over maxTokens (memory allows 60)
  { toolName: "set_context", input: { label: "memory", content: "word ".repeat(200) } },
  // 6: a keyed block without content
  { toolName: "set_context", input: { label: "notes", metadata: { title: "Empty" } } },
  // 7: metadata of the wrong type
  { toolName: "set_context", input: { label: "notes", content: "x", metadata: "Title" } },
  // 8: search on a block that is not searchable
  { toolName: "search_context", input: { label: "memory", query: "tea" } },
  // 9: query of the wrong type
  { toolName: "search_context", input: { label: "notes", query: 7 } },
  // 10: a key of the wrong type
  { toolName: "load_context", input: { label: "skills", key: ["pdf-forms"] } },
  // 11: a key that does not exist
  { toolName: "load_context", input: { label: "skills", key: "juggling" } },
  // 12: arguments that are not an object
  { toolName: "unload_context", input: '"pdf-forms"' },
  // 13: no arguments at all
  { toolName: "search_context", input: "" },
];

const EXPECTED = [
  /^\[error-text\] Error: Block "diary" not found\. Writable blocks: "memory", "notes", "skills"$/,
  /^\[error-text\] Error: Block "soul" is readonly\./,
  /^\[error-text\] Error: set_context: "content" is required$/,
  /^\[error-text\] Error: set_context: "content" must be a string, got number 42$/,
  /^\[error-text\] Error: set_context: "action" must be "replace" or "append", got "prepend"$/,
  /^\[error-text\] Error: Block "memory" exceeds maxTokens: \d+ > 60 \(estimated tokens\)$/,
  /^\[error-text\] Error: set_context: "content" is required$/,
  /^\[error-text\] Error: set_context: "metadata" must be an object/,
  /^\[error-text\] Error: Block "memory" is not searchable\. Searchable blocks: "notes"$/,
  /^\[error-text\] Error: search_context: "query" must be a string, got number 7$/,
  /^\[error-text\] Error: load_context: "key" must be a string, got an array$/,
  /^\[error-text\] Error: no entry "juggling" in skills\./,
  /^\[error-text\] Error: unload_context expects an object of arguments, got "pdf-forms"$/,
  /^\[error-text\] Error: search_context: "label" is required$/,
];

describe("bad tool arguments", () => {
  it("reach core's execute: the model reads an error output naming the problem, and nothing is stored", async () => {
    const store = createStore();
    const context = createContext(store);
    await context.setBlock("memory", "Name: Ada.");
    await context.setEntry("notes", "existing", "An existing note.");
    await context.freezeSystemPrompt();
    const before = structuredClone({ blocks: store.blocks, entries: store.entries });

    const model = scriptedModel([callTools(0, ...BAD_CALLS), answer("Sorry, let me fix that.")]);
    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, [{ role: "user", content: "Remember things." }])),
      stopWhen: stepCountIs(3),
    });

    // Every call became a tool result (never an SDK tool error), and the loop went on.
    const step = result.steps[0];
    expect(step?.content.filter((part) => part.type === "tool-error")).toEqual([]);
    expect(step?.toolResults).toHaveLength(BAD_CALLS.length);
    expect(result.text).toBe("Sorry, let me fix that.");

    const seen = model.doGenerateCalls[1];
    EXPECTED.forEach((pattern, index) => {
      expect(resultText(seen, `call-0-${index}`)).toMatch(pattern);
    });
    expect(structuredClone({ blocks: store.blocks, entries: store.entries })).toEqual(before);
    expect(context.loadedEntries()).toEqual([]);
  });

  it("a made-up label or key of 1 MB comes back quoted in part: the model does not read its megabyte again", async () => {
    const store = createStore();
    const context = createContext(store);
    const made = "z".repeat(1_000_000);
    const calls = [
      { toolName: "set_context", input: { label: made, content: "x" } },
      { toolName: "search_context", input: { label: made, query: "tea" } },
      { toolName: "load_context", input: { label: "skills", key: made } },
      { toolName: "unload_context", input: { label: "skills", key: made } },
    ];
    const model = scriptedModel([callTools(0, ...calls), answer("Sorry.")]);
    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, [{ role: "user", content: "Remember." }])),
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Sorry.");
    const seen = calls.map((_, index) => resultText(model.doGenerateCalls[1], `call-0-${index}`));
    expect(seen[0]).toMatch(/^\[error-text\] Error: Block "z{80}…" not found\. Writable blocks: /);
    expect(seen[1]).toMatch(/^\[error-text\] Error: Block "z{80}…" not found\. Searchable blocks: "notes"$/);
    expect(seen[2]).toMatch(/^\[error-text\] Error: no entry "z{80}…" in skills\. Not found: /);
    expect(seen[3]).toMatch(/^\[error-text\] Error: "z{80}…" from skills is not currently loaded/);
    for (const text of seen) expect(text.length).toBeLessThan(300);
  });

  it("arguments nested 5,000 levels deep, which the SDK cannot copy, are answered with an error, in one step with good calls", async () => {
    const store = createStore();
    const context = createContext(store);
    await context.setBlock("memory", "Name: Ada.");
    await context.freezeSystemPrompt();
    const before = structuredClone({ blocks: store.blocks, entries: store.entries });
    const nested = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const calls = [
      { toolName: "set_context", input: `{"label":"memory","content":${nested}}` },
      { toolName: "load_context", input: `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}` },
      { toolName: "search_context", input: { label: "notes", query: "tea" } },
    ];
    const model = scriptedModel([callTools(0, ...calls), answer("Sorry.")]);
    // Before: a RangeError out of generateText (the SDK deep-copies the step's messages with structuredClone).
    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, [{ role: "user", content: "Remember." }])),
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Sorry.");
    const seen = calls.map((_, index) => resultText(model.doGenerateCalls[1], `call-0-${index}`));
    expect(seen[0]).toBe(
      "[error-text] Error: set_context: the arguments nest arrays or objects deeper than 100 levels; send one flat object of the fields the tool lists",
    );
    expect(seen[1]).toMatch(
      /^\[error-text\] Error: load_context: the arguments nest arrays or objects deeper than 100/,
    );
    expect(seen[2]).toBe("No results found.");
    expect(structuredClone({ blocks: store.blocks, entries: store.entries })).toEqual(before);
  });

  it("JSON the SDK cannot parse is the one case the SDK words: still a readable error, still no throw", async () => {
    const context = createContext(createStore());
    const model = scriptedModel([
      callTools(0, { toolName: "set_context", input: '{"label": "memory", "content": ' }),
      answer("Retrying."),
    ]);
    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, [{ role: "user", content: "Hi" }])),
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Retrying.");
    expect(resultText(model.doGenerateCalls[1], "call-0-0")).toMatch(
      /^\[error-text\] (AI_InvalidToolInputError: )?Invalid input for tool set_context: (AI_JSONParseError: )?JSON parsing failed/,
    );
  });

  it("(why the SDK does not validate) a strict zod schema would turn a wrong type into an SDK-worded tool error", async () => {
    const context = createContext(createStore());
    const strict = contextToolInputSchemas(context).set_context;
    if (!strict) throw new Error("set_context expected");
    const model = scriptedModel([
      callTools(0, { toolName: "set_context", input: { label: "diary", content: 42 } }),
      answer("ok"),
    ]);
    const core = contextTools(context).set_context;
    await generateText({
      model,
      prompt: "Hi",
      tools: {
        set_context: tool({
          inputSchema: strict,
          execute: (input) =>
            core?.execute?.(input, { toolCallId: "", messages: [] }) as Promise<ToolOutcome>,
        }),
      },
      stopWhen: stepCountIs(3),
    });
    const seen = resultText(model.doGenerateCalls[1], "call-0-0");
    expect(seen).toMatch(
      /^\[error-text\] (AI_InvalidToolInputError: )?Invalid input for tool set_context: (AI_TypeValidationError: )?Type validation failed/,
    );
    expect(seen).not.toContain('Block "diary" not found');
  });
});

describe("contextToolInputSchemas", () => {
  it("describe valid arguments with the same JSON Schema the model sees", async () => {
    const context = createContext(createStore());
    const schemas = contextToolInputSchemas(context);
    const specs = context.toolSpecs();
    expect(Object.keys(schemas)).toEqual(specs.map((spec) => spec.name));
    for (const spec of specs) {
      const schema = schemas[spec.name];
      if (!schema) throw new Error(`no schema for ${spec.name}`);
      const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io: "input" }) as Record<
        string,
        unknown
      >;
      // zod writes a one-value enum as `const`: the same set of values.
      expect(JSON.parse(JSON.stringify(json).replace(/"const":("[^"]*")/g, '"enum":[$1]'))).toEqual(
        spec.inputSchema,
      );
    }
    expect(schemas.set_context?.safeParse({ label: "memory", content: "x", action: "append" }).success).toBe(
      true,
    );
    expect(schemas.set_context?.safeParse({ label: "soul", content: "x" }).success).toBe(false);
    expect(schemas.load_context?.safeParse({ label: "skills", key: "pdf-forms" }).success).toBe(true);
  });
});
