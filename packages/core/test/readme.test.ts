import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ContextBlocks, entryKey, REMINDER_PREAMBLE, SYSTEM_PROMPT_LABEL } from "../src/index.js";
import {
  InMemoryContextProvider,
  InMemorySearchProvider,
  InMemorySkillProvider,
} from "../src/memory/index.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

function codeBlockAfter(heading: string, language: string): string {
  const start = readme.indexOf(heading);
  expect(start).toBeGreaterThan(-1);
  const open = readme.indexOf(`\`\`\`${language}\n`, start);
  const close = readme.indexOf("```", open + 4 + language.length);
  return readme.slice(open + 4 + language.length, close);
}

describe("the README", () => {
  it("the example is the fixture that runs, but for its import paths", () => {
    const fixture = readFileSync(new URL("./fixtures/readme-example.ts", import.meta.url), "utf8");
    const example = codeBlockAfter("## Example", "ts");
    const body = fixture
      .split("\n")
      .slice(1)
      .join("\n")
      .replace('from "../../src/memory/index.js"', 'from "@contextblocks/core/memory"')
      .replace('from "../../src/index.js"', 'from "@contextblocks/core"');
    expect(body.startsWith(example)).toBe(true);
  });

  it("the example freezes a prompt, stores it, writes a block and offers set_context", async () => {
    const { context, store, system, tools } = await import("./fixtures/readme-example.js");
    expect(system).toContain("SOUL [readonly]");
    expect(system).toContain("MEMORY (Facts learned about the user) [0% — 0/1100 tokens] [writable]");
    expect(store.blocks.get(SYSTEM_PROMPT_LABEL)).toBe(system);
    expect(store.blocks.get("memory")).toBe("Prefers TypeScript.");
    expect(await context.freezeSystemPrompt()).toBe(system);
    expect(tools.map((tool) => tool.name)).toEqual(["set_context", "edit_context"]);
  });

  it("the rendered example is what the renderer writes", async () => {
    const context = new ContextBlocks([
      { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
      { label: "environment", provider: { get: async () => "Today is 2026-03-14." }, whenChanged: "remind" },
      {
        label: "memory",
        description: "Facts learned about the user",
        maxTokens: 1_100,
        provider: new InMemoryContextProvider({
          initial: "Prefers TypeScript. Deploys on Cloudflare Workers.",
        }),
      },
      { label: "knowledge", description: "Reference notes", provider: new InMemorySearchProvider() },
      {
        label: "skills",
        provider: new InMemorySkillProvider({
          skills: { deploy: { content: "Run wrangler deploy.", description: "Deploy the worker" } },
        }),
      },
    ]);
    await context.setEntry("knowledge", "wifi", "The office wifi password is on the fridge.");
    expect(`${await context.freezeSystemPrompt()}\n`).toBe(codeBlockAfter("## The render format", ""));
  });

  it("quotes the reminder preamble and the key examples as the code has them", () => {
    expect(readme.replace(/\s+/g, " ")).toContain(REMINDER_PREAMBLE);
    expect(entryKey("Breakfast notes", "x")).toBe("breakfast-notes");
    expect(entryKey("C++", "x")).toMatch(/^c--/);
  });
});
