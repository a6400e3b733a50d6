import { prepareContextTurn } from "@contextblocks/ai";
import { ContextBlocks, type ContextConfig } from "@contextblocks/core";
import { Fts5SearchProvider } from "@contextblocks/fts5";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import type { ModelMessage, ToolSet } from "ai";
import Database from "better-sqlite3";
import { knowledgeEntries } from "../../corpus.js";
import { KNOWLEDGE_PRELOAD, MEMORY_START } from "../session.js";
import { sessionBlocks } from "./blocks.js";
import type { PromptSystem, SessionWorld } from "./system.js";

/**
 * Settings of the knowledge block's search provider (its defaults when left out): results, excerpt length,
 * and how weak matches are shown (key only) or left out.
 */
export interface KnowledgeOptions {
  limit?: number;
  resultTokens?: number;
  keyOnlyBelow?: number;
  weakResultTokens?: number;
  dropBelow?: number;
}

/** The session's blocks in contextblocks on better-sqlite3, with the prompt store, memory and knowledge filled. */
export async function contextblocksContext(
  database: Database.Database,
  world: SessionWorld,
  knowledgeOptions: KnowledgeOptions = {},
): Promise<ContextBlocks> {
  const knowledge = new Fts5SearchProvider(database, { label: "knowledge", ...knowledgeOptions });
  for (const entry of knowledgeEntries(KNOWLEDGE_PRELOAD)) await knowledge.set(entry.key, entry.content);
  const blocks = sessionBlocks(world, new SqliteContextProvider(database, "memory"), knowledge);
  const context = new ContextBlocks(
    blocks as ContextConfig[],
    new SqliteContextProvider(database, "_system_prompt"),
  );
  await context.setBlock("memory", MEMORY_START);
  return context;
}

/** contextblocks: `prepareContextTurn` (frozen prompt, tools, reminder after the cached prefix); a refresh after compaction. */
export async function contextblocksSystem(
  world: SessionWorld,
  knowledgeOptions: KnowledgeOptions = {},
): Promise<PromptSystem> {
  const database = new Database(":memory:");
  const context = await contextblocksContext(database, world, knowledgeOptions);
  return {
    name: "contextblocks",
    async request(transcript) {
      const turn = await prepareContextTurn(context, [...transcript]);
      return { system: turn.system, messages: turn.messages as ModelMessage[], tools: turn.tools as ToolSet };
    },
    async compacted() {
      await context.refreshSystemPrompt();
    },
    close: () => database.close(),
  };
}
