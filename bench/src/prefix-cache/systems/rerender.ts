import { contextTools } from "@contextblocks/ai";
import { renderPrompt } from "@contextblocks/core";
import type { ToolSet } from "ai";
import Database from "better-sqlite3";
import { contextblocksContext } from "./contextblocks.js";
import type { PromptSystem, SessionWorld } from "./system.js";

/**
 * What many agents do: render the current blocks into the system prompt on every turn. Same blocks, same
 * rendering and same tools as contextblocks; no frozen prompt, so no reminders are needed.
 */
export async function rerenderSystem(world: SessionWorld): Promise<PromptSystem> {
  const database = new Database(":memory:");
  const context = await contextblocksContext(database, world);
  const tools = contextTools(context) as ToolSet;
  return {
    name: "re-render every turn",
    async request(transcript) {
      await context.load();
      return { system: renderPrompt(context.getBlocks()), messages: [...transcript], tools };
    },
    async compacted() {},
    close: () => database.close(),
  };
}
