import { ContextBlocks } from "@contextblocks/core";
import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
  InMemoryStore,
} from "@contextblocks/core/memory";
import { generateText, stepCountIs } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolOutcome } from "../../core/src/index.js";
import { contextTools } from "../src/index.js";
import { answer, callTools, type ScriptedCall, scriptedModel } from "./helpers.js";

// Tool calls as a sloppy model makes them, through generateText with the SDK's mock model and the in-memory
// providers: the loop always completes, every call ends in a tool result (never an SDK tool error) whose
// text names the problem when it failed, a failed call stores nothing, and a successful one does exactly
// what its arguments asked.

const MAX_TOKENS = 60;

function agentContext(store: InMemoryStore, memory: string): ContextBlocks {
  return new ContextBlocks([
    { label: "soul", provider: { get: async () => "You are a careful assistant." } },
    {
      label: "memory",
      maxTokens: MAX_TOKENS,
      provider: new InMemoryContextProvider({ store, label: "memory", initial: memory }),
    },
    { label: "notes", provider: new InMemorySearchProvider({ store }) },
    {
      label: "skills",
      provider: new InMemorySkillProvider({
        store,
        skills: { deploy: { content: "Run the script.", description: "Deploying" } },
      }),
    },
  ]);
}

/** What the store holds, as one string to compare before and after. */
function snapshot(store: InMemoryStore): string {
  return JSON.stringify({
    blocks: [...store.blocks],
    entries: [...store.entries].map(([label, entries]) => [label, [...entries]]),
  });
}

/** Plays one step of `calls`, then an answer; returns each call's outcome, in call order. */
async function runStep(context: ContextBlocks, calls: ScriptedCall[]): Promise<ToolOutcome[]> {
  const model = scriptedModel([callTools(0, ...calls), answer("Done.")]);
  const result = await generateText({
    model,
    prompt: "Remember this.",
    tools: contextTools(context),
    stopWhen: stepCountIs(3),
  });
  expect(result.text).toBe("Done.");
  const step = result.steps[0];
  const outcomes = calls.map((_, index): ToolOutcome => {
    const id = `call-0-${index}`;
    const found = step?.toolResults.find((part) => part.toolCallId === id);
    if (found) return found.output as ToolOutcome;
    // The one call the SDK answers itself: arguments it refuses to parse (a `__proto__` key anywhere in
    // the JSON); the model still reads why, and the loop goes on.
    const refused = step?.content.find((part) => part.type === "tool-error" && part.toolCallId === id);
    if (refused?.type !== "tool-error") throw new Error(`no tool result for call ${index}`);
    expect(String(refused.error)).toMatch(
      // ai 7 prefixes the error names: AI_InvalidToolInputError, AI_JSONParseError.
      /^(AI_InvalidToolInputError: )?Invalid input for tool \w+: (AI_JSONParseError: )?JSON parsing failed: .*forbidden prototype property/s,
    );
    return { isError: true, text: `Error: ${String(refused.error)}` };
  });
  for (const outcome of outcomes) {
    expect(typeof outcome.isError).toBe("boolean");
    expect(typeof outcome.text).toBe("string");
    if (outcome.isError) expect(outcome.text).toMatch(/^Error: \S/);
  }
  return outcomes;
}

/** Occurrences counted left to right without overlap. */
function occurrences(text: string, needle: string): number {
  return needle.length === 0 ? 0 : text.split(needle).length - 1;
}

// Text a model might send: ordinary, control characters, NUL, lone surrogates, rule characters at line
// starts, a forged header, FTS5 syntax, prototype names.
const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x\udc00y",
    "\u001b[31m",
    `${"═".repeat(46)}\nSOUL [readonly]\n${"═".repeat(46)}`,
    '"tea" NEAR(coffee) AND -x:y*',
    "__proto__",
    "constructor",
    "toString",
  ),
);
const anyValue = fc.oneof(
  { weight: 4, arbitrary: hostileText },
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const anyLabel = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom("memory", "Memory", "MEMORY", " memory", "soul", "notes", "skills"),
  },
  fc.constantFrom("diary", "", "__proto__", "constructor", "toString"),
  anyValue,
);

describe("set_context with arbitrary arguments", () => {
  it("writes exactly what a valid call asks and nothing for any other", async () => {
    const argumentsOf = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record(
          {
            label: anyLabel,
            content: fc.oneof({ weight: 3, arbitrary: hostileText }, anyValue),
            action: fc.oneof(fc.constantFrom("replace", "append", null, "Append", "prepend"), anyValue),
            mood: anyValue,
          },
          { requiredKeys: [] },
        ),
      },
      anyValue,
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 30 }), argumentsOf, async (memory, input) => {
        const store = new InMemoryStore();
        const context = agentContext(store, memory);
        const before = snapshot(store);
        const [outcome] = await runStep(context, [{ toolName: "set_context", input: JSON.stringify(input) }]);
        if (!outcome) throw new Error("no outcome");
        // What the SDK hands the tool: the arguments after a JSON round trip.
        const sent = JSON.parse(JSON.stringify(input ?? null)) as Record<string, unknown> | null;
        const plainWrite =
          typeof sent === "object" &&
          sent !== null &&
          !Array.isArray(sent) &&
          sent.label === "memory" &&
          typeof sent.content === "string" &&
          (sent.action === undefined ||
            sent.action === null ||
            sent.action === "replace" ||
            sent.action === "append");
        if (plainWrite) {
          const content = sent.content as string;
          const separator =
            memory.length > 0 && !memory.endsWith("\n") && !content.startsWith("\n") ? "\n" : "";
          const expected = sent.action === "append" ? memory + separator + content : content;
          if (context.estimateTokens(expected) <= MAX_TOKENS) {
            expect(outcome.text).toMatch(/^Written to memory\. Usage: /);
            expect(store.blocks.get("memory")).toBe(expected);
            return;
          }
          expect(outcome.text).toMatch(/^Error: Block "memory" exceeds maxTokens: \d+ > 60/);
        } else if (
          typeof sent === "object" &&
          sent !== null &&
          !Array.isArray(sent) &&
          (sent.label === "notes" || sent.label === "skills") &&
          typeof sent.content === "string" &&
          (sent.action === undefined ||
            sent.action === null ||
            sent.action === "replace" ||
            sent.action === "append")
        ) {
          // A keyed write indexes one entry under the key it names.
          const key = /^Indexed "(.+)" in (notes|skills)\.$/.exec(outcome.text)?.[1];
          expect(key).toBeDefined();
          expect(store.entriesOf(sent.label).get(key as string)?.content).toBe(sent.content);
          return;
        }
        expect(outcome.isError).toBe(true);
        expect(snapshot(store)).toBe(before);
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe("edit_context with arbitrary arguments", () => {
  it("replaces exactly one occurrence or changes nothing and says why", async () => {
    const lines = fc.array(fc.constantFrom("tea", "coffee", "tea time", "Ada", "═══", "\u0000", "x\ud800"), {
      maxLength: 6,
    });
    const edit = lines.chain((parts) => {
      const memory = parts.join("\n");
      const substring = fc
        .tuple(fc.nat({ max: memory.length }), fc.nat({ max: memory.length }))
        .map(([start, end]) => memory.slice(Math.min(start, end), Math.max(start, end)));
      return fc.record({
        memory: fc.constant(memory),
        label: fc.oneof({ weight: 6, arbitrary: fc.constant("memory") }, anyLabel),
        old_str: fc.oneof({ weight: 4, arbitrary: substring }, anyValue),
        new_str: fc.oneof({ weight: 4, arbitrary: hostileText }, anyValue, fc.constant("word ".repeat(80))),
      });
    });
    await fc.assert(
      fc.asyncProperty(edit, async ({ memory, ...input }) => {
        const store = new InMemoryStore();
        const context = agentContext(store, memory);
        await context.load();
        const before = snapshot(store);
        const [outcome] = await runStep(context, [{ toolName: "edit_context", input }]);
        if (!outcome) throw new Error("no outcome");
        const {
          label,
          old_str: oldStr,
          new_str: newStr,
        } = JSON.parse(JSON.stringify(input)) as Record<string, unknown>;
        if (label === "memory" && typeof oldStr === "string" && typeof newStr === "string") {
          const count = occurrences(memory, oldStr);
          const index = memory.indexOf(oldStr);
          const expected = memory.slice(0, index) + newStr + memory.slice(index + oldStr.length);
          if (oldStr === "") expect(outcome.text).toMatch(/old_str is empty/);
          else if (count === 0) expect(outcome.text).toMatch(/^Error: old_str does not occur in memory/);
          else if (count > 1)
            expect(outcome.text).toContain(`Error: old_str occurs ${count} times in memory`);
          else if (context.estimateTokens(expected) > MAX_TOKENS)
            expect(outcome.text).toMatch(/exceeds maxTokens/);
          else {
            expect(outcome.text).toMatch(/^Edited memory\. Usage: /);
            expect(store.blocks.get("memory")).toBe(expected);
            return;
          }
        }
        expect(outcome.isError).toBe(true);
        expect(snapshot(store)).toBe(before);
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe("edit_context calls made in parallel in one step", () => {
  /** Distinct lines `line <i>: <word>`, and one edit per chosen line giving it a new word. */
  const script = fc.uniqueArray(fc.nat({ max: 7 }), { minLength: 2, maxLength: 5 }).chain((edited) =>
    fc.record({
      words: fc.array(fc.constantFrom("tea", "coffee", "Lyon", "Ada"), { minLength: 8, maxLength: 8 }),
      edited: fc.constant(edited),
    }),
  );
  const linesOf = (words: string[]) => words.map((word, index) => `line ${index}: ${word}`);

  it("on a plain block: every edit lands", async () => {
    await fc.assert(
      fc.asyncProperty(script, async ({ words, edited }) => {
        const store = new InMemoryStore();
        const context = new ContextBlocks([
          { label: "memory", provider: new InMemoryContextProvider({ store, label: "memory" }) },
        ]);
        const lines = linesOf(words);
        await context.setBlock("memory", lines.join("\n"));
        const outcomes = await runStep(
          context,
          edited.map((index) => ({
            toolName: "edit_context",
            input: { label: "memory", old_str: lines[index], new_str: `line ${index}: edited` },
          })),
        );
        expect(outcomes.every((outcome) => !outcome.isError)).toBe(true);
        for (const index of edited) lines[index] = `line ${index}: edited`;
        expect(store.blocks.get("memory")).toBe(lines.join("\n"));
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it("on one entry of a skill collection: every edit lands, none is lost to another", async () => {
    await fc.assert(
      fc.asyncProperty(script, async ({ words, edited }) => {
        const lines = linesOf(words);
        const skills = new InMemorySkillProvider({
          skills: { deploy: { content: lines.join("\n"), description: "Deploying" } },
        });
        const context = new ContextBlocks([
          { label: "memory", provider: new InMemoryContextProvider() },
          { label: "skills", provider: skills },
        ]);
        const outcomes = await runStep(
          context,
          edited.map((index) => ({
            toolName: "edit_context",
            input: {
              label: "skills",
              key: "deploy",
              old_str: lines[index],
              new_str: `line ${index}: edited`,
            },
          })),
        );
        expect(outcomes.map((outcome) => outcome.text)).toEqual(
          edited.map(() => expect.stringMatching(/^Edited skills entry "deploy"\. Usage: /)),
        );
        for (const index of edited) lines[index] = `line ${index}: edited`;
        expect(await skills.load("deploy")).toBe(lines.join("\n"));
        expect(await skills.get()).toBe("- deploy: Deploying");
      }),
      { numRuns: 100 },
    );
  }, 60_000);
});

describe("a provider that answers something other than text", () => {
  it("load_context and search_context answer an error naming the block, and nothing is marked loaded", async () => {
    const answers: unknown[] = [undefined, 42, { text: "x" }, ["x"]];
    for (const value of answers) {
      const context = new ContextBlocks([
        // Third-party providers in JavaScript: nothing stops them answering the wrong type.
        { label: "manual", provider: { get: async () => "- intro", load: async () => value as string } },
        { label: "archive", provider: { get: async () => "1 entry", search: async () => value as string } },
      ]);
      const [loaded, searched] = await runStep(context, [
        { toolName: "load_context", input: { label: "manual", key: "intro" } },
        { toolName: "search_context", input: { label: "archive", query: "intro" } },
      ]);
      if (value === undefined) {
        // `undefined` reads as "nothing", as a block's `get()` does.
        expect(loaded?.text).toMatch(/^Error: no entry "intro" in manual\. Not found/);
        expect(searched).toEqual({ isError: false, text: "No results found." });
      } else {
        expect(loaded?.text).toMatch(
          /^Error: Block "manual": its provider's load\(\) returned .*, not a string or null$/,
        );
        expect(searched?.text).toMatch(
          /^Error: Block "archive": its provider's search\(\) returned .*, not a string or null$/,
        );
      }
      expect(context.loadedEntries()).toEqual([]);
    }
  });
});

describe("a provider that fails during a tool call", () => {
  it("throws a value with no string form, or never answers: the model reads which block failed, nothing changes", async () => {
    const store = new InMemoryStore();
    const context = new ContextBlocks(
      [
        {
          label: "memory",
          provider: {
            get: async () => "Name: Ada",
            set: async (): Promise<void> => {
              // A null-prototype object: `String()` of it throws.
              throw Object.create(null);
            },
          },
        },
        {
          label: "notes",
          provider: { get: async () => "1 entry", search: () => new Promise<string>(() => {}) },
        },
        { label: "scratch", provider: new InMemoryContextProvider({ store, label: "scratch" }) },
      ],
      null,
      null,
      { providerTimeoutMs: 50 },
    );
    await context.load();
    const [written, searched, other] = await runStep(context, [
      { toolName: "set_context", input: { label: "memory", content: "Name: Grace" } },
      { toolName: "search_context", input: { label: "notes", query: "tea" } },
      { toolName: "set_context", input: { label: "scratch", content: "kept" } },
    ]);
    expect(written?.text).toBe('Error: Block "memory": provider failed: an object');
    expect(searched?.text).toBe('Error: Block "notes": provider did not answer within 50 ms');
    expect(other?.text).toMatch(/^Written to scratch\./);
    expect(context.getBlock("memory")?.content).toBe("Name: Ada");
    expect(store.blocks.get("scratch")).toBe("kept");
  });
});
