import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ContextBlocks } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySearchProvider, InMemoryStore } from "@contextblocks/core/memory";
import { expect, it } from "vitest";

const FENCE = "```";

it("the root README's rendered prompt is what ContextBlocks renders for those blocks, byte for byte", async () => {
  const readme = readFileSync(join(import.meta.dirname, "..", "..", "..", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## A rendered prompt"));
  const start = section.indexOf(`${FENCE}text\n`) + `${FENCE}text\n`.length;
  const shown = section.slice(start, section.indexOf(`\n${FENCE}`, start));

  const store = new InMemoryStore();
  const context = new ContextBlocks([
    { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
    {
      label: "memory",
      description: "Facts learned about the user",
      maxTokens: 1100,
      provider: new InMemoryContextProvider({ store }),
    },
    { label: "knowledge", provider: new InMemorySearchProvider({ store }) },
    { label: "environment", provider: { get: async () => "Today is 2026-11-29." } },
  ]);
  await context.setBlock("memory", "The user prefers TypeScript.\nThey deploy on Cloudflare Workers.");
  for (let entry = 0; entry < 42; entry++)
    await context.setEntry("knowledge", `entry-${entry}`, `Entry ${entry}.`);
  expect(shown).toBe(await context.freezeSystemPrompt());
});
