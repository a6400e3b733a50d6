import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { describe, expect, it } from "vitest";
import { contextTools, prepareContextTurn } from "../src/index.js";
import { answer, callTools, resultText, scriptedModel } from "./helpers.js";

function profileContext(store: InMemoryStore): ContextBlocks {
  return new ContextBlocks([
    { label: "soul", provider: { get: async () => "You are a careful assistant." } },
    {
      label: "profile",
      description: "What we know about the user",
      maxTokens: 40,
      provider: new InMemoryContextProvider({ store }),
    },
  ]);
}

describe("edit_context through generateText", () => {
  it("answers success, not found, ambiguous with the count, readonly and over the limit; only the success writes", async () => {
    const store = new InMemoryStore();
    const context = profileContext(store);
    await context.setBlock("profile", "Name: Ada\nCity: Paris\nPet: cat\nPet: cat");
    const model = scriptedModel([
      callTools(0, {
        toolName: "edit_context",
        input: { label: "profile", old_str: "City: Paris", new_str: "City: Lyon" },
      }),
      callTools(1, {
        toolName: "edit_context",
        input: { label: "profile", old_str: "City: Berlin", new_str: "City: Rome" },
      }),
      callTools(2, {
        toolName: "edit_context",
        input: { label: "profile", old_str: "Pet: cat", new_str: "" },
      }),
      callTools(3, {
        toolName: "edit_context",
        input: { label: "soul", old_str: "careful", new_str: "bold" },
      }),
      callTools(4, {
        toolName: "edit_context",
        input: { label: "profile", old_str: "Name: Ada", new_str: "Name: Ada ".repeat(40) },
      }),
      answer("Updated your city."),
    ]);
    const messages: ModelMessage[] = [{ role: "user", content: "I moved to Lyon." }];

    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, messages)),
      stopWhen: stepCountIs(10),
    });

    expect(result.text).toBe("Updated your city.");
    const calls = model.doGenerateCalls;
    expect(resultText(calls[1], "call-0-0")).toMatch(/^Edited profile\. Usage: \d+% \(\d+\/40 tokens\)$/);
    expect(resultText(calls[2], "call-1-0")).toMatch(
      /^\[error-text\] Error: old_str does not occur in profile; nothing was changed/,
    );
    expect(resultText(calls[3], "call-2-0")).toBe(
      "[error-text] Error: old_str occurs 2 times in profile; nothing was changed. Include more of the surrounding text so it matches exactly once.",
    );
    expect(resultText(calls[4], "call-3-0")).toMatch(
      /^\[error-text\] Error: Block "soul" is not a plain writable block/,
    );
    expect(resultText(calls[5], "call-4-0")).toMatch(
      /^\[error-text\] Error: Block "profile" exceeds maxTokens: \d+ > 40/,
    );
    // Failures reach the model as tool results, never thrown into the loop.
    const thrown = result.steps.flatMap((step) => step.content).filter((part) => part.type === "tool-error");
    expect(thrown).toEqual([]);
    expect(store.blocks.get("profile")).toBe("Name: Ada\nCity: Lyon\nPet: cat\nPet: cat");
    // The history records the edit with its tool call id.
    const [newest] = await context.blockHistory("profile", { limit: 1 });
    expect(newest).toMatchObject({
      content: "Name: Ada\nCity: Lyon\nPet: cat\nPet: cat",
      source: { kind: "tool", name: "edit_context", toolCallId: "call-0-0" },
    });
  });

  it("the model sees one edit_context definition, the same before and after writes", async () => {
    const context = profileContext(new InMemoryStore());
    const before = JSON.stringify(contextTools(context).edit_context.inputSchema);
    await context.setBlock("profile", "changed");
    expect(JSON.stringify(contextTools(context).edit_context.inputSchema)).toBe(before);
    expect(contextTools(context).edit_context.description).toContain('Editable blocks: "profile"');
  });
});
