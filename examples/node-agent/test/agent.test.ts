import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REMINDER_PREAMBLE } from "@contextblocks/core";
import { SCRIPTED_MODEL_ID, SCRIPTED_REPLY_PREFIX } from "scripted-model";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NodeAgent, type NodeAgentOptions } from "../src/agent.js";

let directory = "";
let path = "";
const open: NodeAgent[] = [];

async function openAgent(options: NodeAgentOptions = {}): Promise<NodeAgent> {
  const agent = await NodeAgent.open(path, options);
  open.push(agent);
  return agent;
}

/** Closes the database and opens the same file again: a new process would do the same. */
async function coldStart(agent: NodeAgent): Promise<NodeAgent> {
  agent.close();
  open.splice(open.indexOf(agent), 1);
  return openAgent();
}

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "node-agent-test-"));
  path = join(directory, "agent.db");
});

afterEach(() => {
  for (const agent of open.splice(0)) agent.close();
  rmSync(directory, { recursive: true, force: true });
});

describe("node-agent on a better-sqlite3 file", () => {
  it("writes memory through set_context while the frozen prompt stays byte-identical", async () => {
    const agent = await openAgent();
    const frozen = await agent.prompt();
    const result = await agent.chat("Remember that my favourite editor is Helix.");
    expect(result.model).toBe(SCRIPTED_MODEL_ID);
    expect(result.reply.startsWith(SCRIPTED_REPLY_PREFIX)).toBe(true);
    expect(result.toolCalls).toEqual([
      {
        tool: "set_context",
        input: { label: "memory", content: "- My favourite editor is Helix.", action: "append" },
        output: expect.stringMatching(/^Written to memory\. Usage: \d+% \(\d+\/600 tokens\)$/),
        isError: false,
      },
    ]);
    expect(result.systemIsFrozenPrompt).toBe(true);
    const memory = (await agent.blocks()).find((block) => block.label === "memory");
    expect(memory?.content).toBe("- My favourite editor is Helix.");
    expect(await agent.prompt()).toBe(frozen);
    expect(frozen).not.toContain("Helix");
  });

  it("answers a question from the seeded knowledge block through search_context", async () => {
    const agent = await openAgent();
    const result = await agent.chat("Where does the data live?");
    expect(result.toolCalls[0]?.tool).toBe("search_context");
    expect(result.reply).toContain("[where-the-data-lives]");
  });

  it("returns the identical prompt after the file is closed and opened again, and keeps the transcript", async () => {
    let agent = await openAgent();
    const frozen = await agent.prompt();
    await agent.chat("Remember that I prefer short answers.");
    agent = await coldStart(agent);
    expect(await agent.prompt()).toBe(frozen);
    expect((await agent.transcript()).map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    const next = await agent.chat("What do you remember about me?");
    expect(next.reply).toContain("I prefer short answers.");
    // Seeding happened once: a cold start does not index the entries again.
    expect((await agent.blocks()).find((block) => block.label === "knowledge")?.content).toBe(
      "4 entries indexed.",
    );
  });

  it("promotes the write on refresh, and the refreshed prompt survives a cold start", async () => {
    let agent = await openAgent();
    const frozen = await agent.prompt();
    await agent.chat("Remember that I deploy on Fridays.");
    const refreshed = await agent.refresh();
    expect(refreshed).not.toBe(frozen);
    expect(refreshed).toContain("- I deploy on Fridays.");
    agent = await coldStart(agent);
    expect(await agent.prompt()).toBe(refreshed);
  });

  it("sends a changed date as a reminder that survives a cold start and ends at a refresh", async () => {
    let agent = await openAgent();
    const frozen = await agent.prompt();
    expect(await agent.reminder()).toBeNull();
    agent.setDate("2031-01-02");
    const result = await agent.chat("What is the date today?");
    expect(result.reminder?.startsWith(REMINDER_PREAMBLE)).toBe(true);
    expect(result.reminder).toContain("Today is 2031-01-02.");
    expect(result.reply).toContain("Today is 2031-01-02.");
    expect(await agent.prompt()).toBe(frozen);
    // Stored: the user's words and the answer, never the reminder.
    const stored = await agent.session.getHistory();
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(stored[0]?.parts).toEqual([{ type: "text", text: "What is the date today?" }]);
    expect(JSON.stringify(stored)).not.toContain(REMINDER_PREAMBLE);

    agent = await coldStart(agent);
    expect(await agent.reminder()).toBe(result.reminder);
    expect(await agent.refresh()).toContain("Today is 2031-01-02.");
    expect(await agent.reminder()).toBeNull();
  });

  it("sends only the new message: the session pipeline loads the conversation and stores each model call once", async () => {
    let agent = await openAgent();
    await agent.chat("Remember that my favourite editor is Helix.");
    await agent.chat("Where does the data live?");
    const roles = (await agent.transcript()).map((message) => message.role);
    expect(roles).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    agent = await coldStart(agent);
    const next = await agent.chat("What do you remember about me?");
    // The memory answer reads the set_context call of the first turn: the history came from the file.
    expect(next.reply).toContain("My favourite editor is Helix.");
    expect(next.systemIsFrozenPrompt).toBe(true);
    expect(await agent.transcript()).toHaveLength(10);
  });

  it("compacts after a turn past the threshold; the refreshed prompt then carries the memory it wrote", async () => {
    let agent = await openAgent({ compactAfter: 1_000 });
    const frozen = await agent.prompt();
    const facts = [
      "Helix is my editor",
      "I deploy on Fridays",
      "I live in Porto",
      "I drink tea",
      "I use pnpm",
    ];
    let compacted: string | null = null;
    for (let turn = 0; turn < 20 && compacted === null; turn++) {
      const fact = facts[turn % facts.length];
      const result = await agent.chat(`Remember that ${fact} (turn ${turn}).`);
      // Every call of a turn carries the prompt as it was when the turn began.
      expect(result.systemIsFrozenPrompt).toBe(true);
      if (result.compaction !== null) compacted = result.compaction.summary;
      else expect(await agent.prompt()).toBe(frozen);
    }
    expect(compacted, "a compaction within 20 turns").not.toBeNull();
    expect(compacted).toContain("## Key Points");
    // The compaction refreshed the frozen prompt: the memory writes are in it, and it survives a cold start.
    const refreshed = await agent.prompt();
    expect(refreshed).not.toBe(frozen);
    expect(refreshed).toContain("- Helix is my editor (turn 0).");
    agent = await coldStart(agent);
    expect(await agent.prompt()).toBe(refreshed);
    const history = await agent.session.getHistory();
    expect(history.some((message) => message.id.startsWith("compaction_"))).toBe(true);
    const next = await agent.chat("What do you remember about me?");
    expect(next.systemIsFrozenPrompt).toBe(true);
    expect(next.reply).toContain("Helix is my editor (turn 0).");
  });
});
