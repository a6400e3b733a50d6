import {
  AgentContextProvider,
  AgentSearchProvider,
  ContextBlocks,
} from "@contextblocks/agents/experimental/memory/session";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import {
  ContextBlocks as AgentsContextBlocks,
  AgentContextProvider as AgentsContextProvider,
  AgentSearchProvider as AgentsSearchProvider,
} from "agents-context/context";
import { afterEach, describe, expect, it } from "vitest";

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

describe("a database agents@0.32.0's agents/context wrote", () => {
  it("reads its blocks, its frozen prompt and its search entries; writes and searches after", async () => {
    temporary = openTemporaryDatabase();
    const agent = agentsHost(temporary.database);
    const soul = { get: async () => "You are the harbour master's assistant." };
    const theirNotes = new AgentsSearchProvider(agent);
    const theirs = new AgentsContextBlocks(
      [
        { label: "soul", provider: soul },
        {
          label: "memory",
          description: "Learned facts",
          maxTokens: 1100,
          provider: new AgentsContextProvider(agent),
        },
        { label: "notes", description: "Harbour notes", provider: theirNotes },
      ],
      new AgentsContextProvider(agent, "_system_prompt"),
    );
    await theirs.load();
    await theirs.setBlock("memory", "The ferry leaves at nine.");
    await theirNotes.set("tides", "High tide is at six in the evening.");
    await theirNotes.set("fees", "Mooring costs ten a night.");
    const prompt = await theirs.freezeSystemPrompt();

    const ours = new ContextBlocks(
      [
        { label: "soul", provider: soul },
        {
          label: "memory",
          description: "Learned facts",
          maxTokens: 1100,
          provider: new AgentContextProvider(agent),
        },
        { label: "notes", description: "Harbour notes", provider: new AgentSearchProvider(agent) },
      ],
      new AgentContextProvider(agent, "_system_prompt"),
    );
    // The stored prompt is served as agents froze it (the prefix cache stays warm), then the blocks as written.
    expect(await ours.freezeSystemPrompt()).toBe(prompt);
    await ours.load();
    expect(ours.getBlock("memory")?.content).toBe("The ferry leaves at nine.");
    expect(await ours.searchContext("notes", "when is high tide")).toContain("six in the evening");

    await ours.setSearchEntry("notes", "chandlery", "The chandlery opens at eight on Sunday.");
    expect(await ours.searchContext("notes", "chandlery")).toContain("eight on Sunday");
    await ours.setBlock("memory", "The ferry leaves at nine sharp.");
    // agents reads the blocks contextblocks wrote. Search entries are one-way: contextblocks copies agents'
    // cf_agents_search_fts into its own index on first use and writes there (so agents does not see new ones).
    const againNotes = new AgentsSearchProvider(agent);
    const again = new AgentsContextBlocks([
      { label: "memory", maxTokens: 1100, provider: new AgentsContextProvider(agent) },
      { label: "notes", provider: againNotes },
    ]);
    await again.load();
    expect(again.getBlock("memory")?.content).toBe("The ferry leaves at nine sharp.");
    expect(await againNotes.search("chandlery")).toBeNull();
  });
});

describe("the entry's ContextBlocks against agents@0.32.0's, method by method", () => {
  it("the first write (refused or not), addBlock, tools() and reminder() read every block; appends keep agents' line break", async () => {
    temporary = openTemporaryDatabase();
    const agent = agentsHost(temporary.database);
    // Each action on blocks of their own (keys under `prefix`), read by nothing before it: a woken object.
    const open = (implementation: "agents" | "entry", prefix: string) => {
      const stored = (label: string) =>
        implementation === "agents"
          ? new AgentsContextProvider(agent, `${prefix}${label}`)
          : new AgentContextProvider(agent, `${prefix}${label}`);
      const configs = [
        { label: "soul", provider: { get: async () => "Fixed soul." } },
        { label: "journal", whenChanged: "remind" as const, provider: stored("journal") },
        { label: "notes", description: "Notes", provider: stored("notes") },
      ];
      return implementation === "agents" ? new AgentsContextBlocks(configs) : new ContextBlocks(configs);
    };
    const actions: [string, (blocks: AgentsContextBlocks | ContextBlocks) => Promise<unknown>][] = [
      ["setBlock", (blocks) => blocks.setBlock("journal", "Line one.\n")],
      ["setBlock, refused", (blocks) => blocks.setBlock("soul", "x")],
      ["appendToBlock", (blocks) => blocks.appendToBlock("notes", "Line two.")],
      ["addBlock", (blocks) => blocks.addBlock({ label: "extra", provider: { get: async () => "Extra." } })],
      ["tools", (blocks) => blocks.tools()],
      ["reminder", (blocks) => blocks.reminder()],
    ];
    const observe = async (implementation: "agents" | "entry") => {
      const seen: unknown[] = [];
      for (const [name, action] of actions) {
        const blocks = open(implementation, `${implementation}-${name}-`);
        await action(blocks).catch(() => "throws");
        seen.push([name, blocks.getBlocks().map((block) => [block.label, block.content])]);
      }
      // Appends after text that ends with a line break: agents puts another between (a blank line).
      const blocks = open(implementation, `${implementation}-appends-`);
      await blocks.setBlock("notes", "Line one.\n");
      const tools = (await blocks.tools()) as Record<
        string,
        { execute(input: unknown, options: unknown): unknown }
      >;
      await tools.set_context?.execute({ label: "notes", content: "By the tool.\n", action: "append" }, {});
      await blocks.appendToBlock("notes", "");
      seen.push(["appends", blocks.getBlock("notes")?.content]);
      return seen;
    };
    expect(await observe("entry")).toEqual(await observe("agents"));
  });
});
