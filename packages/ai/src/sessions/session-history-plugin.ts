import { ContextError } from "@contextblocks/core";
import { clipped, describeValue } from "@contextblocks/core/store-kit";
import type { Session, SessionManager, SessionMessage } from "@contextblocks/sessions";
import type { HistoryCall, HistoryPlugin, HistoryPluginOptions } from "../pipeline/history-plugin.js";
import type { RunMessage } from "../pipeline/model-types.js";
import { runMessagesOf } from "./run-message-decoding.js";
import { toSessionMessage, withToolResults } from "./run-message-encoding.js";

/** Which session a call reads and writes: one `Session`, a manager's session per id, or your own lookup. */
export type SessionSource = Session | SessionManager | ((sessionId: string) => Session | Promise<Session>);

/** Options of `SessionHistoryPlugin`. */
export interface SessionHistoryOptions extends HistoryPluginOptions {
  /**
   * Where the conversation lives. A `Session`: every call uses it, whatever the call's session id (one
   * conversation per Durable Object). A `SessionManager` or a function: the session of the call's id
   * (the middleware's `sessionId`, or `providerOptions.contextblocks.sessionId`).
   */
  session: SessionSource;
  /**
   * Load only the newest messages whose stored size fits this many bytes (`Session.getRecentHistory`),
   * starting at a user message. Default: the whole branch. A window that slides moves the cached prefix
   * on every turn; compaction (`compactAfter`) keeps both the prompt small and the prefix stable.
   */
  maxBytes?: number;
  /** Ids of the messages it appends. Default `crypto.randomUUID()`. */
  generateId?: () => string;
}

/**
 * A history plugin backed by `@contextblocks/sessions`: it loads the session's current branch
 * (`Session.getHistory()`, compaction overlays applied) as model messages and appends each call's
 * messages as UI-shaped session messages, tool results written into their calls' tool parts. A stored
 * turn reads back byte for byte as it was sent, so the next turn's prompt cache holds; what the UI shape
 * cannot hold exactly is stored as it was (one `data-run-message` part).
 *
 * ```ts
 * const history = new SessionHistoryPlugin("history", { session });
 * const pipeline = contextPipeline({ model, plugins: [history], stateStore: new SqliteRunStateStore(db) });
 * ```
 */
export class SessionHistoryPlugin implements HistoryPlugin {
  readonly loadMessages: boolean;
  readonly storeInputs: boolean;
  readonly storeOutputs: boolean;
  readonly storeContextMessages: boolean;
  readonly #source: SessionSource;
  readonly #maxBytes: number | undefined;
  readonly #generateId: () => string;

  constructor(
    readonly sourceId: string,
    options: SessionHistoryOptions,
  ) {
    if (typeof options !== "object" || options === null) {
      throw new ContextError(
        "INVALID_CONFIG",
        `SessionHistoryPlugin: expected options with a session, got ${describeValue(options)}`,
      );
    }
    const { session, maxBytes, generateId } = options;
    if (!isSession(session) && !isSessionManager(session) && typeof session !== "function") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SessionHistoryPlugin: session must be a Session, a SessionManager or a function of the session id, got ${describeValue(session)}`,
      );
    }
    if (maxBytes !== undefined && !(Number.isFinite(maxBytes) && maxBytes > 0)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `SessionHistoryPlugin: maxBytes must be a positive number, got ${String(maxBytes)}`,
      );
    }
    if (generateId !== undefined && typeof generateId !== "function") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SessionHistoryPlugin: generateId must be a function, got ${describeValue(generateId)}`,
      );
    }
    this.#source = session;
    this.#maxBytes = maxBytes;
    this.#generateId = generateId ?? (() => crypto.randomUUID());
    this.loadMessages = options.loadMessages ?? true;
    this.storeInputs = options.storeInputs ?? true;
    this.storeOutputs = options.storeOutputs ?? true;
    this.storeContextMessages = options.storeContextMessages ?? false;
  }

  async getMessages(sessionId: string, call?: HistoryCall): Promise<RunMessage[]> {
    const session = await this.sessionOf(sessionId);
    // A call that continues a named message (an edit: a new branch) reads that branch, whole.
    const parentId = call?.parentId;
    if (parentId !== undefined)
      return parentId === null ? [] : runMessagesOf(await session.getHistory(parentId));
    if (this.#maxBytes === undefined) return runMessagesOf(await session.getHistory());
    const { messages, truncated } = await session.getRecentHistory(this.#maxBytes);
    return runMessagesOf(truncated ? fromFirstUserMessage(messages) : messages);
  }

  /**
   * Appends the call's messages to the latest leaf (or under the call's `parentId`). A tool message's
   * results go into the tool parts of the assistant message that made the calls (updated in place), as a
   * chat UI keeps them: that message is the leaf, or, when another turn of the session stored messages
   * while the tools ran, the newest message of the branch that holds the calls still waiting (each result
   * joins its own call, wherever the turns' messages landed).
   */
  async saveMessages(sessionId: string, messages: readonly RunMessage[], call?: HistoryCall): Promise<void> {
    if (messages.length === 0) return;
    const session = await this.sessionOf(sessionId);
    const parentId = call?.parentId;
    const appended: SessionMessage[] = [];
    let updated: SessionMessage | null = null;
    for (const message of messages) {
      if (message.role === "tool") {
        const target: SessionMessage | null =
          appended.at(-1) ??
          updated ??
          (parentId === undefined
            ? await session.store.getLatestLeaf()
            : parentId === null
              ? null
              : await session.store.getMessage(parentId));
        const merged: SessionMessage | null =
          (target === null ? null : withToolResults(target, message)) ??
          (appended.length === 0 && updated === null
            ? await callsOnBranch(session, message, parentId)
            : null);
        if (merged !== null) {
          if (appended.length > 0) appended[appended.length - 1] = merged;
          else updated = merged;
          continue;
        }
      }
      appended.push(toSessionMessage(message, this.#generateId(), new Date()));
    }
    if (updated !== null) await session.updateMessage(updated);
    // One call's messages are one turn: the session checks its compaction threshold once, after all of them.
    await session.appendMessages(appended, parentId);
  }

  /** The session a call with this id reads and writes. */
  async sessionOf(sessionId: string): Promise<Session> {
    const source = this.#source;
    if (isSession(source)) return source;
    if (isSessionManager(source)) return source.getSession(sessionId);
    const session = await source(sessionId);
    if (!isSession(session)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `SessionHistoryPlugin "${this.sourceId}": the session function returned ${describeValue(session)} for "${clipped(sessionId)}", not a Session`,
      );
    }
    return session;
  }
}

/*
 * Recognised by shape, as every plugin here is: a second copy of this package (two versions in one
 * bundle) makes sessions `instanceof` would not know.
 */
function isSession(value: unknown): value is Session {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return ["getHistory", "getRecentHistory", "appendMessage", "updateMessage"].every(
    (method) => typeof candidate[method] === "function",
  );
}

function isSessionManager(value: unknown): value is SessionManager {
  return typeof (value as { getSession?: unknown } | null)?.getSession === "function";
}

/**
 * The stored message of the branch (newest first) that holds the calls `tool` answers, with the results
 * written in; `null` when none does. Read only when the leaf does not hold them: another turn's messages
 * were stored after the calls while their tools ran.
 */
async function callsOnBranch(
  session: Session,
  tool: RunMessage,
  parentId: string | null | undefined,
): Promise<SessionMessage | null> {
  if (parentId === null) return null;
  const branch = await session.getHistory(parentId);
  for (let index = branch.length - 1; index >= 0; index--) {
    const merged = withToolResults(branch[index] as SessionMessage, tool);
    if (merged !== null) return merged;
  }
  return null;
}

/** A window cut from the front starts at a user message: most plugins refuse a leading answer or result. */
function fromFirstUserMessage(messages: readonly SessionMessage[]): SessionMessage[] {
  const first = messages.findIndex((message) => message.role === "user");
  return first === -1 ? [] : messages.slice(first);
}
