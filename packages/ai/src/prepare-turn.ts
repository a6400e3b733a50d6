import type { ContextBlocks } from "@contextblocks/core";
import type { ContextToolName } from "@contextblocks/core/store-kit";
import type { ContextMessage } from "./messages.js";
import { attachReminder, reminderTargetIndex } from "./reminder-placement.js";
import { type ContextToolSet, type ContextToolsOptions, contextTools } from "./tools.js";
import { withSectionsNeutralized } from "./transcript-sections.js";
import { checkTurnMessages } from "./turn-messages.js";
import { replaceUnloadedEntries, type UnloadOptions } from "./unload.js";

/** Options of `prepareContextTurn`. */
export interface PrepareContextTurnOptions<Excluded extends ContextToolName = ContextToolName>
  extends UnloadOptions {
  /** Attach `context.reminder()` to the newest user message. Default `true`. */
  reminder?: boolean;
  /** Replace the results of unloaded `load_context` calls with a placeholder. Default `true`. */
  unload?: boolean;
  /** Passed to `contextTools`. */
  tools?: ContextToolsOptions<Excluded>;
}

/** What one `generateText` / `streamText` call needs from the context. */
export interface PreparedContextTurn<M extends ContextMessage, Excluded extends ContextToolName = never> {
  /** The frozen system prompt: the same string turn after turn until `refreshSystemPrompt()`. */
  system: string;
  /**
   * The messages to send: the reminder on the newest user message, unloaded entries replaced, the rule lines
   * of a user's text and of tool results broken.
   */
  messages: M[];
  /** `contextTools(context)`: the same object while the configuration is unchanged. */
  tools: ContextToolSet<Exclude<ContextToolName, Excluded>>;
}

/**
 * Prepares one turn: the frozen `system` prompt, the `messages` with the pending reminder attached to the
 * newest user message (the one that asks for the reply, also when the request continues a partial
 * assistant reply), unloaded entries' text replaced by a placeholder and the rule lines of a user's text
 * and of tool results broken (neither can pose as a block section: `withSectionsNeutralized`), and the
 * `tools`. Spread it into `generateText` / `streamText` (UI
 * messages: pass `messages` through `convertToModelMessages` first).
 *
 * Takes model messages or UI messages and returns the same kind; a malformed one (a part without a type, a role
 * no message has) is refused, naming it (`INVALID_INPUT`). The input is never mutated and nothing is
 * stored: keep your own `messages` as the transcript, not the prepared ones. Calling it again on its own
 * output does not add the reminder twice.
 */
export async function prepareContextTurn<
  M extends ContextMessage,
  const Excluded extends ContextToolName = never,
>(
  context: ContextBlocks,
  messages: readonly M[],
  options: PrepareContextTurnOptions<Excluded> = {},
): Promise<PreparedContextTurn<M, Excluded>> {
  checkTurnMessages(messages);
  const system = await context.freezeSystemPrompt();
  const reminder = options.reminder === false ? null : await context.reminder({ sending: true });
  const shown = options.unload === false ? [...messages] : replaceUnloadedEntries(messages, options);
  const attaches = options.reminder !== false;
  const visible = withSectionsNeutralized(shown, attaches ? reminderTargetIndex(shown) : -1);
  return {
    system,
    messages: attaches ? attachReminder(visible, reminder) : visible,
    tools: contextTools(context, options.tools),
  };
}
