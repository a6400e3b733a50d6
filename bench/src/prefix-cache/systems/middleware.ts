import { contextMiddleware, InMemoryHistoryPlugin, type RunMessage } from "@contextblocks/ai";
import { type ModelMessage, wrapLanguageModel } from "ai";
import Database from "better-sqlite3";
import { contextblocksContext } from "./contextblocks.js";
import type { PromptSystem, SessionWorld } from "./system.js";

/**
 * contextblocks through `contextMiddleware`: the same blocks, the model wrapped once, each turn sends only the
 * user's new message and an `InMemoryHistoryPlugin` supplies the conversation. A compaction replaces the
 * stored history with the host's summary and refreshes the prompt.
 */
export function middlewareSystem(world: SessionWorld): Promise<PromptSystem> {
  return middlewareWith(world, true);
}

/** The same with `cacheHints: false`: what a provider that caches only at explicit breakpoints sees without them. */
export function middlewareWithoutHintsSystem(world: SessionWorld): Promise<PromptSystem> {
  return middlewareWith(world, false);
}

async function middlewareWith(world: SessionWorld, cacheHints: boolean): Promise<PromptSystem> {
  const database = new Database(":memory:");
  const context = await contextblocksContext(database, world);
  const sessions = new Map<string, RunMessage[]>();
  const middleware = contextMiddleware({
    context,
    plugins: [new InMemoryHistoryPlugin("history", { sessions })],
    cacheHints,
  });
  let compacted = false;
  return {
    name: cacheHints ? "contextblocks (middleware)" : "contextblocks (middleware, no cache hints)",
    wrapModel: (model) => wrapLanguageModel({ model, middleware }),
    async request(transcript) {
      if (compacted) {
        sessions.set("default", transcript.slice(0, -1).map(runMessage));
        compacted = false;
      }
      return { messages: transcript.slice(-1), tools: middleware.tools };
    },
    async compacted() {
      compacted = true;
      await context.refreshSystemPrompt();
    },
    close: () => database.close(),
  };
}

/** The host's compaction messages (string content) as the model receives them. */
function runMessage(message: ModelMessage): RunMessage {
  if (message.role === "system" || typeof message.content !== "string") return message as RunMessage;
  return { ...message, content: [{ type: "text", text: message.content }] } as RunMessage;
}
