import type { ContextBlocks } from "@contextblocks/core";
import type { ModelMessage, ToolSet } from "ai";
import { type PrepareContextTurnOptions, prepareContextTurn } from "../prepare-turn.js";
import { contextTools } from "../tools.js";
import type { RunMessage } from "./model-types.js";
import type { ContextPlugin } from "./plugin.js";

/** Options of `contextBlocksPlugin`: those of `prepareContextTurn`, and the plugin's id. */
export interface ContextBlocksPluginOptions extends PrepareContextTurnOptions {
  /** Default `"contextblocks"`. */
  sourceId?: string;
}

/**
 * Makes a `ContextBlocks` a plugin: its frozen prompt becomes the call's first system message, its
 * tools (`contextTools`) are offered on every call, and `prepareContextTurn` places the reminder on the
 * newest user message and replaces unloaded entries, on the whole conversation the model sees (history
 * included). The reminder reaches the model only: history plugins store the caller's messages.
 */
export function contextBlocksPlugin(
  context: ContextBlocks,
  options: ContextBlocksPluginOptions = {},
): ContextPlugin {
  const { sourceId = "contextblocks", ...turnOptions } = options;
  return {
    sourceId,
    // A getter: blocks added at runtime change the tools (contextTools returns the same object otherwise).
    get tools(): ToolSet {
      return contextTools(context, turnOptions.tools);
    },
    async beforeCall(run) {
      run.setFrozenPrompt(sourceId, await context.freezeSystemPrompt());
      run.transformMessages(sourceId, async (messages) => {
        // Model-call messages have ModelMessage's shape (array content), which prepareContextTurn reads.
        const turn = await prepareContextTurn(context, messages as ModelMessage[], turnOptions);
        return turn.messages as RunMessage[];
      });
    },
  };
}
