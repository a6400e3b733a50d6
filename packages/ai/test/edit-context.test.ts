import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";
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
    const [newest] = await context.blockVersions("profile", { limit: 1 });
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

  it("edits one entry of a skill collection with key: success, not found, ambiguous, unknown key, readonly, over the limit, key rules", async () => {
    const skills = new InMemorySkillProvider({
      skills: {
        deploy: {
          content: "Run the script.\nThen tag: v1.\nTag: done.\nTag: done.",
          description: "Deploying",
        },
      },
    });
    const context = new ContextBlocks([
      { label: "profile", maxTokens: 40, provider: new InMemoryContextProvider({ initial: "Name: Ada" }) },
      { label: "skills", description: "How-tos", maxTokens: 30, provider: skills },
      {
        // A skill collection whose provider cannot write: read-only.
        label: "manual",
        provider: { get: async () => "- intro", load: async () => "Read me." },
      },
    ]);
    const edit = (index: number, input: Record<string, unknown>) =>
      callTools(index, { toolName: "edit_context", input });
    const model = scriptedModel([
      edit(0, { label: "skills", key: "deploy", old_str: "tag: v1", new_str: "tag: v2" }),
      edit(1, { label: "skills", key: "deploy", old_str: "tag: v9", new_str: "x" }),
      edit(2, { label: "skills", key: "deploy", old_str: "Tag: done.", new_str: "" }),
      edit(3, { label: "skills", key: "rollback", old_str: "a", new_str: "b" }),
      edit(4, { label: "manual", key: "intro", old_str: "Read", new_str: "Skip" }),
      edit(5, { label: "skills", key: "deploy", old_str: "Run the script.", new_str: "Run it. ".repeat(40) }),
      edit(6, { label: "skills", old_str: "Run", new_str: "Start" }),
      edit(7, { label: "profile", key: "deploy", old_str: "Ada", new_str: "Grace" }),
      answer("Done."),
    ]);
    const messages: ModelMessage[] = [{ role: "user", content: "We release v2 now." }];
    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, messages)),
      stopWhen: stepCountIs(12),
    });

    expect(result.text).toBe("Done.");
    const calls = model.doGenerateCalls;
    expect(resultText(calls[1], "call-0-0")).toMatch(/^Edited skills entry "deploy"\. Usage: /);
    expect(resultText(calls[2], "call-1-0")).toMatch(
      /^\[error-text\] Error: old_str does not occur in skills entry "deploy"; nothing was changed/,
    );
    expect(resultText(calls[3], "call-2-0")).toMatch(
      /^\[error-text\] Error: old_str occurs 2 times in skills entry "deploy"; nothing was changed/,
    );
    expect(resultText(calls[4], "call-3-0")).toMatch(
      /^\[error-text\] Error: Block "skills" has no entry "rollback"; nothing was changed/,
    );
    expect(resultText(calls[5], "call-4-0")).toMatch(
      /^\[error-text\] Error: Block "manual" is not a plain writable block/,
    );
    expect(resultText(calls[6], "call-5-0")).toMatch(
      /^\[error-text\] Error: Block "skills" .*exceeds maxTokens/,
    );
    expect(resultText(calls[7], "call-6-0")).toBe(
      '[error-text] Error: Block "skills" holds keyed entries: pass the key of the entry to edit',
    );
    expect(resultText(calls[8], "call-7-0")).toBe(
      '[error-text] Error: Block "profile" is a plain block with no entries: omit key',
    );
    const thrown = result.steps.flatMap((step) => step.content).filter((part) => part.type === "tool-error");
    expect(thrown).toEqual([]);
    // Only the first edit wrote; the entry keeps its description.
    expect(await skills.load("deploy")).toBe("Run the script.\nThen tag: v2.\nTag: done.\nTag: done.");
    expect(await skills.get()).toBe("- deploy: Deploying");
    expect(await context.getBlock("profile")?.content).toBe("Name: Ada");
  });

  it("offers key only when a skill collection accepts writes, and the definition is a pure function of the configuration", () => {
    const plain = contextTools(profileContext(new InMemoryStore())).edit_context;
    expect(
      Object.keys((plain.inputSchema as { jsonSchema: { properties: object } }).jsonSchema.properties),
    ).toEqual(["label", "old_str", "new_str"]);
    const keyedContext = () =>
      new ContextBlocks([
        { label: "profile", provider: new InMemoryContextProvider() },
        { label: "skills", provider: new InMemorySkillProvider({ skills: { a: { content: "x" } } }) },
      ]);
    const first = contextTools(keyedContext()).edit_context;
    const second = contextTools(keyedContext()).edit_context;
    expect(first.description).toBe(second.description);
    expect(JSON.stringify(first.inputSchema)).toBe(JSON.stringify(second.inputSchema));
    expect(first.description).toContain(
      'To edit one entry of a skill collection ("skills"), also pass its key.',
    );
    expect(
      Object.keys((first.inputSchema as { jsonSchema: { properties: object } }).jsonSchema.properties),
    ).toEqual(["label", "old_str", "new_str", "key"]);
    // Skill collections alone bring agents/context's tools; editEntries offers edit_context for them too.
    const skillsOnly = (options = {}) =>
      new ContextBlocks(
        [{ label: "skills", provider: new InMemorySkillProvider({ skills: { a: { content: "x" } } }) }],
        undefined,
        undefined,
        options,
      );
    expect(Object.keys(contextTools(skillsOnly())).sort()).toEqual([
      "load_context",
      "set_context",
      "unload_context",
    ]);
    expect(contextTools(skillsOnly({ editEntries: true })).edit_context?.description).toBe(
      'Edit a writable context block in place: replace one exact occurrence of old_str with new_str (an empty new_str deletes it). old_str must occur exactly once in the block\'s current text; if it occurs 0 or several times nothing changes and the error says how many, so add surrounding text and retry. Use it to fix or remove part of a block without rewriting the whole block with set_context. To edit one entry of a skill collection ("skills"), also pass its key.',
    );
  });
});
