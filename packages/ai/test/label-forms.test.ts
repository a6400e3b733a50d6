import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { expect, it } from "vitest";
import { prepareContextTurn } from "../src/index.js";
import { answer, callTools, resultText, scriptedModel } from "./helpers.js";

// A label written with a decomposed "é" (e + U+0301, as macOS spells file names) and the same label as a
// model types it (one character, U+00E9) look the same in the prompt, the tool list and any error.
const decomposed = "caf\u0065\u0301";
const composed = "caf\u00e9";

it("a tool call naming a block in another Unicode form of its label reaches that block", async () => {
  const store = new InMemoryStore();
  const context = new ContextBlocks([
    { label: "soul", provider: { get: async () => "You are a careful assistant." } },
    { label: decomposed, provider: new InMemoryContextProvider({ store }) },
    {
      label: `r\u0065\u0301gles`,
      provider: new InMemorySkillProvider({
        store,
        skills: { service: { content: "Open at eight.", description: "Opening hours" } },
      }),
    },
  ]);
  await context.setBlock(decomposed, "Menu: soup");
  const model = scriptedModel([
    callTools(0, {
      toolName: "set_context",
      input: { label: composed, content: "Menu: salad", action: "replace" },
    }),
    callTools(1, { toolName: "edit_context", input: { label: composed, old_str: "salad", new_str: "tart" } }),
    callTools(2, { toolName: "load_context", input: { label: "r\u00e9gles", key: "service" } }),
    callTools(3, { toolName: "set_context", input: { label: "soul", content: "x" } }),
    answer("Done."),
  ]);
  const messages: ModelMessage[] = [{ role: "user", content: "Change the menu." }];

  const result = await generateText({
    model,
    ...(await prepareContextTurn(context, messages)),
    stopWhen: stepCountIs(10),
  });

  expect(result.text).toBe("Done.");
  const calls = model.doGenerateCalls;
  expect(resultText(calls[1], "call-0-0")).toMatch(/^Written to caf/);
  expect(resultText(calls[2], "call-1-0")).toMatch(/^Edited caf/);
  expect(resultText(calls[3], "call-2-0")).toContain("Open at eight.");
  expect(resultText(calls[4], "call-3-0")).toMatch(/^\[error-text\] Error: Block "soul" is readonly/);
  expect(store.blocks.get(decomposed)).toBe("Menu: tart");
  expect(store.blocks.has(composed)).toBe(false);
});
