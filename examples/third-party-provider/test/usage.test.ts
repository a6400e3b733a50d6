import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import { afterEach, beforeEach, expect, it } from "vitest";
import { JsonFileContextProvider } from "../src/index.js";

// The README's usage example, as a test.

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "contextblocks-json-"));
});
afterEach(() => rm(directory, { recursive: true, force: true }));

function agentContext(path: string): ContextBlocks {
  const blocks: ContextConfig[] = [
    { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
    { label: "memory", description: "Facts learned about the user", maxTokens: 1_100 },
  ];
  return new ContextBlocks(
    blocks,
    new JsonFileContextProvider({ path }), // the frozen prompt, as label "_system_prompt"
    (label) => new JsonFileContextProvider({ path, label }), // blocks declared without a provider
  );
}

it("backs blocks and the frozen prompt with one JSON file, across a restart", async () => {
  const path = join(directory, "context.json");
  const context = agentContext(path);
  const prompt = await context.freezeSystemPrompt();
  expect(prompt).toContain("MEMORY (Facts learned about the user) [0% — 0/1100 tokens] [writable]");

  const setContext = context.toolSpecs().find((tool) => tool.name === "set_context");
  const outcome = await setContext?.execute({ label: "memory", content: "Prefers metric units." });
  expect(outcome?.isError).toBe(false);
  expect(outcome?.text).toMatch(/^Written to memory\./);
  expect(await context.freezeSystemPrompt()).toBe(prompt);

  const restarted = agentContext(path);
  expect(await restarted.freezeSystemPrompt()).toBe(prompt);
  expect(await restarted.refreshSystemPrompt()).toContain("Prefers metric units.");
});
