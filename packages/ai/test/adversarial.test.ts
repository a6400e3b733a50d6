import { parseSections } from "@contextblocks/core";
import { InMemoryContextProvider } from "@contextblocks/core/memory";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { ADVERSARIAL_TEXTS } from "../../conformance/src/adversarial.js";
import { prepareContextTurn } from "../src/index.js";
import { comparePrefix } from "../src/test.js";
import { answer, callTools, createContext, createStore, resultText, scriptedModel } from "./helpers.js";

const HEADERS = [
  "SOUL [readonly]",
  "MEMORY (Facts about the user) [0% — 0/60 tokens] [writable]",
  "NOTES (Searchable notes) [searchable]",
  "SKILLS (Skills to load) [loadable]",
  "SCRATCH [writable]",
];

// Issue 12: the adversarial corpus through the AI SDK (generateText with a scripted model). A model writes
// each text into a block and searches with it as the query: the loop never throws, the text is stored as
// given, and the next prompt has exactly the configured sections, with only that block changed.
describe("adversarial texts written and searched by a model through generateText", () => {
  it.each(ADVERSARIAL_TEXTS.map((entry) => [entry.name, entry.text] as const))(
    "%s",
    async (_name, text) => {
      const store = createStore();
      const context = createContext(store, [
        { label: "scratch", provider: new InMemoryContextProvider({ store, label: "scratch" }) },
      ]);
      const messages: ModelMessage[] = [{ role: "user", content: "Keep this." }];
      const first = await prepareContextTurn(context, messages);
      const model = scriptedModel([
        callTools(0, { toolName: "set_context", input: { label: "scratch", content: text } }),
        callTools(1, { toolName: "search_context", input: { label: "notes", query: text } }),
        answer("Kept."),
      ]);
      const result = await generateText({ model, ...first, stopWhen: stepCountIs(5) });
      expect(result.text).toBe("Kept.");
      // Either written, or refused with a reason the model can read (over the content limit); never thrown.
      const written = resultText(model.doGenerateCalls[1], "call-0-0");
      expect(written).toMatch(
        /^(Written to scratch\.|(\[error-text\] )?Error: set_context: content is \d+ characters; the limit is \d+$)/,
      );
      const accepted = written.startsWith("Written");
      expect(store.blocks.get("scratch") === (accepted ? text : undefined)).toBe(true);
      // Whitespace-only queries are refused by name; any other query gets an answer, matches or none.
      const searched = resultText(model.doGenerateCalls[2], "call-1-0");
      if (searched.includes("Error:")) expect(searched).toMatch(/"query" is empty/);

      const refreshed = await context.refreshSystemPrompt();
      expect(parseSections(refreshed).map((section) => section.header)).toEqual(HEADERS);
      const comparison = await comparePrefix(first, { system: refreshed }, { context });
      expect(comparison.system.changedBlocks).toEqual(accepted && text !== "" ? ["scratch"] : []);
    },
    30_000,
  );
});
