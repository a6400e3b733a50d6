import { ContextError } from "@contextblocks/core";
import { clipped } from "@contextblocks/core/store-kit";
import type { Session } from "@contextblocks/sessions";
import type { ToolSet } from "ai";
import { type SessionHistoryOptions, SessionHistoryPlugin } from "../sessions/session-history-plugin.js";
import { type ContextBlocksPluginOptions, contextBlocksPlugin } from "./blocks-plugin.js";
import type { HistoryCall, HistoryPlugin } from "./history-plugin.js";
import type { RunMessage } from "./model-types.js";
import { estimateRunMessageTokens } from "./run-message-tokens.js";

/**
 * Options of `sessionPlugin` (and `contextMiddleware`'s `sessionOptions`): `prepareContextTurn`'s
 * (`reminder`, `unload`, `tools`…) for the session's blocks, and `SessionHistoryPlugin`'s for its history.
 */
export interface SessionPluginOptions
  extends Omit<ContextBlocksPluginOptions, "sourceId">,
    Pick<SessionHistoryOptions, "maxBytes" | "generateId" | "storeContextMessages"> {
  /** Names the plugin in errors and keys its run state. Default `"session"`. */
  sourceId?: string;
}

/**
 * A `Session` as one plugin: what `contextPipeline({ model, session })` runs first, around every model
 * call. Like a context plugin of Microsoft Agent Framework that is also its history plugin, it gives
 * the call everything the session owns:
 * - the frozen prompt (`session.context.freezeSystemPrompt()`) as the first system message, the pending
 *   reminder on the newest user message, unloaded entries replaced, and the blocks' tools
 *   (`contextBlocksPlugin` over `session.context`);
 * - the history: the session's branch with compaction overlays applied, before the caller's messages
 *   (`SessionHistoryPlugin`), so the caller passes only new messages;
 * - after the call, its messages stored in the session as one turn (`Session.appendMessages`): the
 *   session's automatic compaction (`compactAfter`) runs at most once, after all of them. A compaction
 *   refreshes the frozen prompt, so what the model wrote with `set_context` reaches the next call's
 *   system prompt.
 * A call that names another session (`providerOptions: { contextblocks: { sessionId } }`) is refused: the
 * plugin serves `session.id` only (`"default"` for the default session `""`).
 */
export function sessionPlugin(session: Session, options: SessionPluginOptions = {}): HistoryPlugin {
  if (!isSessionLike(session)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `sessionPlugin: expected a Session (from @contextblocks/sessions), got ${describe(session)}`,
    );
  }
  const { sourceId = "session", maxBytes, generateId, storeContextMessages, ...turnOptions } = options;
  const blocks = contextBlocksPlugin(session.context, { ...turnOptions, sourceId });
  const history = new SessionHistoryPlugin(sourceId, {
    session,
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(generateId === undefined ? {} : { generateId }),
  });
  const served = pipelineSessionId(session);
  const sameSession = (sessionId: string, step: string): void => {
    if (sessionId !== served) {
      throw new ContextError(
        "INVALID_INPUT",
        `${step}: this pipeline serves session ${JSON.stringify(clipped(served))}; a call named ${JSON.stringify(clipped(sessionId))} (build one pipeline per session)`,
      );
    }
  };
  return {
    sourceId,
    loadMessages: true,
    storeInputs: true,
    storeOutputs: true,
    storeContextMessages: storeContextMessages ?? false,
    // A getter: blocks added at run time change the tools.
    get tools(): ToolSet {
      return blocks.tools ?? {};
    },
    async beforeCall(run) {
      await blocks.beforeCall?.(run);
    },
    async getMessages(sessionId: string, call: HistoryCall): Promise<RunMessage[]> {
      sameSession(sessionId, "getMessages");
      return history.getMessages(sessionId, call);
    },
    async saveMessages(sessionId: string, messages: readonly RunMessage[], call: HistoryCall): Promise<void> {
      sameSession(sessionId, "saveMessages");
      // Before the messages are stored: the session's automatic compaction decides on this append, from
      // its estimate calibrated by what the provider counted for the same prompt.
      if (call.usage !== undefined && typeof session.reportUsage === "function") {
        const { inputTokens, sentMessages, cacheReadTokens, cacheWriteTokens } = call.usage;
        await session.reportUsage({
          inputTokens,
          pendingTokens: estimateRunMessageTokens(messages.slice(0, sentMessages)),
          ...(cacheReadTokens === undefined ? {} : { cacheReadTokens }),
          ...(cacheWriteTokens === undefined ? {} : { cacheWriteTokens }),
        });
      }
      await history.saveMessages(sessionId, messages, call);
    },
  };
}

/**
 * The id a pipeline gives a session's calls (and keys its run state by): `session.id`, and `"default"`
 * (the middleware's default session) for the default session `""`, which run-state stores refuse.
 */
export function pipelineSessionId(session: Session): string {
  return session.id === "" ? "default" : session.id;
}

/** Recognised by shape, as every plugin here is (two copies of the sessions package in one bundle). */
function isSessionLike(value: unknown): value is Session {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.id === "string" &&
    typeof candidate.appendMessages === "function" &&
    typeof candidate.getHistory === "function" &&
    typeof candidate.subscribe === "function" &&
    "context" in candidate
  );
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object that is not a Session" : `a ${typeof value}`;
}
