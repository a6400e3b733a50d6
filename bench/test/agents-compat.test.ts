import { ContextBlocks, type ContextConfig, type ContextToolSpec } from "@contextblocks/core";
import { ContextBlocks as AgentsContextBlocks } from "agents/context";
import { describe, expect, it } from "vitest";

/**
 * Byte compatibility with agents/context: for the same blocks and content, the rendered prompt, the reminder
 * and the tool descriptions are the same strings, so a migrating agent keeps its cached prefix.
 */

interface Clock {
  today: string;
}

/** The same block declarations for both systems, on stores of their own. */
function declarations(clock: Clock, workspace: { files: string | null } = { files: null }) {
  const store = new Map<string, string>();
  const writable = (label: string) => ({
    get: async () => store.get(label) ?? null,
    set: async (content: string) => {
      store.set(label, content);
    },
  });
  const search = {
    get: async () => "3 entries indexed.",
    search: async () => null,
    set: async () => {},
  };
  return [
    { label: "soul", provider: { get: async () => "You are a helpful assistant." } },
    { label: "empty", provider: { get: async () => null } },
    {
      label: "memory",
      description: "Facts learned about the user",
      maxTokens: 1_100,
      provider: writable("memory"),
    },
    { label: "notes", provider: writable("notes") },
    { label: "knowledge", description: "Project notes", provider: search },
    {
      label: "environment",
      provider: { get: async () => `Today is ${clock.today}.` },
      whenChanged: "remind" as const,
    },
    { label: "workspace", provider: { get: async () => workspace.files }, whenChanged: "remind" as const },
  ];
}

/** agents/context counts tokens as max(characters / 4, words × 1.3); use the same here for equal headers. */
function agentsTokenEstimate(text: string): number {
  if (!text) return 0;
  return Math.ceil(Math.max(text.length / 4, text.split(/\s+/).filter(Boolean).length * 1.3));
}

async function pair(workspace: { files: string | null } = { files: null }) {
  const ourClock = { today: "2026-11-29" };
  const theirClock = { today: "2026-11-29" };
  const ours = new ContextBlocks(declarations(ourClock, workspace) as ContextConfig[], null, null, {
    tokenCounter: agentsTokenEstimate,
  });
  const theirs = new AgentsContextBlocks(declarations(theirClock, workspace) as never);
  return { ours, theirs, ourClock, theirClock };
}

describe("byte compatibility with agents/context", () => {
  it("renders the same prompt for the same blocks and content", async () => {
    const { ours, theirs } = await pair();
    for (const system of [ours, theirs]) {
      await system.setBlock("memory", "The user prefers TypeScript.\nThey deploy on Workers.");
      await system.appendToBlock("notes", "Ship on Friday.");
    }
    const prompt = await ours.freezeSystemPrompt();
    expect(prompt).toBe(await theirs.freezeSystemPrompt());
    expect(prompt).toContain("MEMORY (Facts learned about the user) [");
  });

  it("sends the same reminder when a remind block changes", async () => {
    const { ours, theirs, ourClock, theirClock } = await pair();
    await ours.freezeSystemPrompt();
    await theirs.freezeSystemPrompt();
    expect(await ours.reminder()).toBeNull();
    ourClock.today = theirClock.today = "2026-11-30";
    const reminder = await ours.reminder();
    expect(reminder).toContain("Today is 2026-11-30.");
    expect(reminder).toBe(await theirs.reminder());
  });

  // agents@0.32.0's `whenChanged` reminders, scenario by scenario: the same string (or null) from both.
  it("reminds of a remind block that was empty when frozen and has content now", async () => {
    const workspace = { files: null as string | null };
    const { ours, theirs } = await pair(workspace);
    await ours.freezeSystemPrompt();
    await theirs.freezeSystemPrompt();
    workspace.files = "src/index.ts changed";
    const reminder = await ours.reminder();
    expect(reminder).toContain("src/index.ts changed");
    expect(reminder).toBe(await theirs.reminder());
  });

  it("reminds of two changed remind blocks in block order", async () => {
    const workspace = { files: null as string | null };
    const { ours, theirs, ourClock, theirClock } = await pair(workspace);
    await ours.freezeSystemPrompt();
    await theirs.freezeSystemPrompt();
    workspace.files = "README.md changed";
    ourClock.today = theirClock.today = "2026-12-01";
    const reminder = await ours.reminder();
    expect(reminder?.indexOf("2026-12-01")).toBeLessThan(reminder?.indexOf("README.md") ?? -1);
    expect(reminder).toBe(await theirs.reminder());
  });

  it("stops reminding when the value changes back, and after a refresh", async () => {
    const { ours, theirs, ourClock, theirClock } = await pair();
    await ours.freezeSystemPrompt();
    await theirs.freezeSystemPrompt();
    ourClock.today = theirClock.today = "2026-11-30";
    expect(await ours.reminder()).toBe(await theirs.reminder());
    ourClock.today = theirClock.today = "2026-11-29";
    expect(await ours.reminder()).toBeNull();
    expect(await theirs.reminder()).toBeNull();
    ourClock.today = theirClock.today = "2026-12-02";
    expect(await ours.refreshSystemPrompt()).toBe(await theirs.refreshSystemPrompt());
    expect(await ours.reminder()).toBeNull();
    expect(await theirs.reminder()).toBeNull();
  });

  it("never reminds of a block that waits, and not before a freeze", async () => {
    const { ours, theirs } = await pair();
    expect(await ours.reminder()).toBeNull();
    expect(await theirs.reminder()).toBeNull();
    await ours.freezeSystemPrompt();
    await theirs.freezeSystemPrompt();
    for (const system of [ours, theirs]) await system.setBlock("memory", "Changed after the freeze.");
    expect(await ours.reminder()).toBeNull();
    expect(await theirs.reminder()).toBeNull();
  });

  it("reminds after a restart on the stored prompt (new instances, same prompt stores)", async () => {
    const stored = { ours: null as string | null, theirs: null as string | null };
    const promptStore = (side: "ours" | "theirs") => ({
      get: async () => stored[side],
      set: async (content: string) => {
        stored[side] = content;
      },
    });
    const clock = { today: "2026-11-29" };
    const make = () => ({
      ours: new ContextBlocks(declarations(clock) as ContextConfig[], promptStore("ours"), null, {
        tokenCounter: agentsTokenEstimate,
      }),
      theirs: new AgentsContextBlocks(declarations(clock) as never, promptStore("theirs") as never),
    });
    const before = make();
    expect(await before.ours.freezeSystemPrompt()).toBe(await before.theirs.freezeSystemPrompt());
    clock.today = "2026-11-30";
    const after = make();
    const reminder = await after.ours.reminder();
    expect(reminder).toContain("Today is 2026-11-30.");
    expect(reminder).toBe(await after.theirs.reminder());
  });

  it("describes set_context and search_context with the same words", async () => {
    const { ours, theirs } = await pair();
    const theirTools = (await theirs.tools()) as Record<string, { description?: string }>;
    const ourTools = new Map(ours.toolSpecs().map((tool: ContextToolSpec) => [tool.name, tool]));
    for (const name of ["set_context", "search_context"] as const) {
      expect(ourTools.get(name)?.description, name).toBe(theirTools[name]?.description);
    }
  });
});
