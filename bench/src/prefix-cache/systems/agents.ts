import { AgentContextProvider, AgentSearchProvider, ContextBlocks, type ContextConfig } from "agents/context";
import type { ModelMessage, ToolSet } from "ai";
import Database from "better-sqlite3";
import { betterSqlite3Host } from "../../agents-sql.js";
import { knowledgeEntries } from "../../corpus.js";
import { KNOWLEDGE_PRELOAD, MEMORY_START } from "../session.js";
import { sessionBlocks } from "./blocks.js";
import type { PromptSystem, SessionWorld } from "./system.js";

/**
 * `agents/context` as Think drives it: the frozen prompt persisted under `_system_prompt`, `tools()`, and
 * `reminder()` added at the end of the newest user message, never stored; a refresh after compaction.
 */
export async function agentsSystem(world: SessionWorld): Promise<PromptSystem> {
  const database = new Database(":memory:");
  const host = betterSqlite3Host(database);
  const knowledge = new AgentSearchProvider(host);
  knowledge.init("knowledge");
  for (const entry of knowledgeEntries(KNOWLEDGE_PRELOAD)) await knowledge.set(entry.key, entry.content);
  const blocks = sessionBlocks(world, new AgentContextProvider(host, "memory"), knowledge);
  const context = new ContextBlocks(
    blocks as ContextConfig[],
    new AgentContextProvider(host, "_system_prompt"),
  );
  await context.setBlock("memory", MEMORY_START);
  return {
    name: "agents/context",
    async request(transcript) {
      const system = await context.freezeSystemPrompt();
      const tools = (await context.tools()) as ToolSet;
      const reminder = await context.reminder();
      return { system, messages: appendToNewestUserMessage(transcript, reminder), tools };
    },
    async compacted() {
      await context.refreshSystemPrompt();
    },
    close: () => database.close(),
  };
}

/** A copy of the transcript with `text` added as the last text part of the newest user message. */
export function appendToNewestUserMessage(
  transcript: readonly ModelMessage[],
  text: string | null,
): ModelMessage[] {
  const messages = [...transcript];
  if (text === null) return messages;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (message.role !== "user") continue;
    const parts =
      typeof message.content === "string"
        ? [{ type: "text" as const, text: message.content }]
        : message.content;
    messages[index] = { ...message, content: [...parts, { type: "text", text }] };
    break;
  }
  return messages;
}
