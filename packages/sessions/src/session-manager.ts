import {
  ContextError,
  type ContextTracer,
  type SearchProvider,
  type WritableContextProvider,
} from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { CompactAfterOptions, CompactFunction, CompactionErrorHandler } from "./compaction/types.js";
import type { HistoryBatchOptions, HistoryOptions, HistoryResult } from "./history-read.js";
import type { SessionMessage } from "./message.js";
import {
  type ImportOptions,
  Session,
  type SessionContextOptions,
  type SessionEvent,
  type SessionSettings,
} from "./session.js";
import { isSessionBackend, type SessionBackend } from "./session-backend.js";
import type { CreateSessionOptions, SessionInfo } from "./session-registry.js";
import type { SearchResult, StoredCompaction } from "./session-store.js";
import { checkUsageArguments } from "./store-arguments.js";

export type { CreateSessionOptions, SessionInfo };

/** `SessionManager.create` (also `fork`, `compactAndSplit`) registered a session. */
export interface SessionCreatedEvent {
  type: "session-created";
  sessionId: string;
  name: string;
  parentSessionId: string | null;
}

/** `SessionManager.delete` deleted a session and everything it owned. */
export interface SessionDeletedEvent {
  type: "session-deleted";
  sessionId: string;
}

/**
 * What `SessionManager.subscribe` listeners hear: sessions created and deleted, and every event of the
 * manager's sessions (blocks written, prompt frozen or refreshed, reminders sent, compactions) with the
 * session's id.
 */
export type SessionManagerEvent =
  | SessionCreatedEvent
  | SessionDeletedEvent
  | (SessionEvent & { sessionId: string });

/** A manager listener; what it throws is caught and never fails the operation that caused the event. */
export type SessionManagerListener = (event: SessionManagerEvent) => void;

/** Text that opens the first message of a session made by `compactAndSplit`. */
export const continuationPreamble = "[Context from previous session]";

/**
 * Many named sessions in one database: a registry (`backend.registry`, the `assistant_sessions` rows
 * Cloudflare agents' Sessions API keeps), each session a `Session` with the manager's builder settings,
 * and search across sessions. The `session_search` tool is `sessionSearchTool(manager)` in
 * `@contextblocks/ai`.
 *
 * ```ts
 * const manager = new SessionManager(sqliteBackend(ctx.storage))
 *   .withContext("memory", { maxTokens: 1100 })
 *   .withCachedPrompt()
 *   .withSearchableHistory("history");
 * const chat = await manager.create("Support chat");
 * await manager.append(chat.id, message);
 * ```
 */
export class SessionManager {
  readonly #backend: SessionBackend;
  readonly #settings: SessionSettings = { contexts: [] };
  readonly #sessions = new Map<string, Session>();
  #historyLabel: string | undefined;
  readonly #listeners = new Set<SessionManagerListener>();

  constructor(backend: SessionBackend) {
    if (!isSessionBackend(backend)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `new SessionManager: expected a SessionBackend (sqliteBackend(…), postgresBackend(…), inMemoryBackend()), got ${describeValue(backend)}`,
      );
    }
    this.#backend = backend;
  }

  /** The backend every session of this manager lives in. */
  get backend(): SessionBackend {
    return this.#backend;
  }

  // ── Builder (applies to every session) ──────────────────────────────────────────────────────────────

  withContext(label: string, options: SessionContextOptions = {}): this {
    this.#settings.contexts.push({ ...options, label });
    return this;
  }

  withCachedPrompt(provider?: WritableContextProvider): this {
    this.#settings.cachedPrompt = provider ?? true;
    return this;
  }

  onCompaction(compaction: CompactFunction): this {
    this.#settings.compaction = compaction;
    return this;
  }

  compactAfter(threshold: number, options: CompactAfterOptions = {}): this {
    this.#settings.threshold = threshold;
    if (options.tokenCounter !== undefined) this.#settings.tokenCounter = options.tokenCounter;
    return this;
  }

  onCompactionError(handler: CompactionErrorHandler): this {
    this.#settings.onCompactionError = handler;
    return this;
  }

  /** Where every session and its blocks report spans (`otelTracer()` from `@contextblocks/otel`). */
  withTracer(tracer: ContextTracer): this {
    this.#settings.tracer = tracer;
    return this;
  }

  /**
   * Hears `session-created`, `session-deleted` and the events of every session this manager opened, each
   * with its `sessionId`. Listeners run after the operation succeeded; what they throw is caught. Returns
   * the function that unsubscribes.
   */
  subscribe(listener: SessionManagerListener): () => void {
    if (typeof listener !== "function") {
      throw new ContextError(
        "INVALID_INPUT",
        `subscribe: expected a function, got ${describeValue(listener)}`,
      );
    }
    const wrapped: SessionManagerListener = (event) => listener(event);
    this.#listeners.add(wrapped);
    return () => {
      this.#listeners.delete(wrapped);
    };
  }

  /** Adds a searchable block over every session's messages (the model searches past conversations). */
  withSearchableHistory(label: string): this {
    this.#historyLabel = label;
    return this;
  }

  // ── Registry ────────────────────────────────────────────────────────────────────────────────────────

  /** The `Session` for an id: created on first access with the manager's settings, then cached. */
  getSession(sessionId: string): Session {
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      throw new ContextError(
        "INVALID_INPUT",
        `getSession: the session id must be a non-empty string, got ${describeValue(sessionId)}`,
      );
    }
    let session = this.#sessions.get(sessionId);
    if (session === undefined) {
      const settings: SessionSettings = { ...this.#settings, contexts: [...this.#settings.contexts] };
      if (this.#historyLabel !== undefined) {
        settings.contexts.push({
          label: this.#historyLabel,
          description: "Cross-session conversation history",
          provider: this.#historyProvider(),
        });
      }
      session = this.sessionClass().fromSettings(this.#backend, sessionId, settings);
      session.subscribe((event) => this.#emit({ ...event, sessionId }));
      this.#sessions.set(sessionId, session);
    }
    return session;
  }

  /** The class `getSession` builds; a subclass of the manager may return a subclass of `Session`. */
  protected sessionClass(): typeof Session {
    return Session;
  }

  async create(name: string, options: CreateSessionOptions = {}): Promise<SessionInfo> {
    if (typeof name !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `create: the name must be a string, got ${describeValue(name)}`,
      );
    }
    const info = await this.#backend.registry.create(crypto.randomUUID(), name, options);
    this.#emit({
      type: "session-created",
      sessionId: info.id,
      name: info.name,
      parentSessionId: info.parent_session_id,
    });
    return info;
  }

  get(sessionId: string): Promise<SessionInfo | null> {
    return this.#backend.registry.get(sessionId);
  }

  /** Every session, most recently updated first. */
  list(): Promise<SessionInfo[]> {
    return this.#backend.registry.list();
  }

  /** Renames a session; `NOT_FOUND` for an unknown id. */
  async rename(sessionId: string, name: string): Promise<void> {
    if (typeof name !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `rename: the name must be a string, got ${describeValue(name)}`,
      );
    }
    await this.#backend.registry.update(sessionId, { name });
  }

  /**
   * Deletes the session and everything it owned (`backend.deleteSession`): messages, overlays, search
   * rows, its blocks, its frozen prompt, its run state and its registry row.
   */
  async delete(sessionId: string): Promise<void> {
    await this.#backend.deleteSession(sessionId);
    this.#sessions.delete(sessionId);
    this.#emit({ type: "session-deleted", sessionId });
  }

  // ── Messages (each touches updated_at) ──────────────────────────────────────────────────────────────

  async append(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    await this.getSession(sessionId).appendMessage(message, parentId);
    await this.#touch(sessionId);
    return message.id;
  }

  /**
   * Updates the message when its id exists in the session (its parent stays), appends it otherwise
   * (`Session.upsertMessage`).
   */
  async upsert(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    await this.getSession(sessionId).upsertMessage(message, { parentId });
    await this.#touch(sessionId);
    return message.id;
  }

  /** Stores a message written elsewhere with its id, parent and time (`Session.importMessage`). */
  async importMessage(
    sessionId: string,
    message: SessionMessage,
    parentId: string | null,
    options: ImportOptions,
  ): Promise<void> {
    await this.getSession(sessionId).importMessage(message, parentId, options);
    await this.#touch(sessionId);
  }

  /** The path read in bounded batches up to a byte budget (`Session.history`). */
  history(sessionId: string, options: HistoryOptions = {}): Promise<HistoryResult> {
    return this.getSession(sessionId).history(options);
  }

  /** The path in bounded batches (`Session.historyBatches`). */
  historyBatches(
    sessionId: string,
    options: HistoryBatchOptions = {},
  ): AsyncGenerator<SessionMessage[], { truncated: boolean; bytes: number }, undefined> {
    return this.getSession(sessionId).historyBatches(options);
  }

  /** Appends in order, each under the previous one (the first under `parentId`, default the latest leaf). */
  async appendAll(
    sessionId: string,
    messages: readonly SessionMessage[],
    parentId?: string | null,
  ): Promise<string | null> {
    const session = this.getSession(sessionId);
    let parent: string | null | undefined = parentId;
    for (const message of messages) {
      await session.appendMessage(message, parent);
      parent = message.id;
    }
    await this.#touch(sessionId);
    return parent ?? null;
  }

  getHistory(sessionId: string, leafId?: string | null): Promise<SessionMessage[]> {
    return this.getSession(sessionId).getHistory(leafId);
  }

  /** Messages on the path root..leaf (default: the latest leaf), overlays not applied. */
  getPathLength(sessionId: string, leafId?: string | null): Promise<number> {
    return this.getSession(sessionId).getPathLength(leafId);
  }

  async clearMessages(sessionId: string): Promise<void> {
    await this.getSession(sessionId).clearMessages();
    await this.#touch(sessionId);
  }

  async deleteMessages(sessionId: string, messageIds: string[]): Promise<void> {
    await this.getSession(sessionId).deleteMessages(messageIds);
    await this.#touch(sessionId);
  }

  getBranches(sessionId: string, messageId: string): Promise<SessionMessage[]> {
    return this.getSession(sessionId).getBranches(messageId);
  }

  /** A new session holding copies (new ids) of the path root..`atMessageId`, overlays applied. */
  async fork(sessionId: string, atMessageId: string, name: string): Promise<SessionInfo> {
    const history = await this.getSession(sessionId).getHistory(atMessageId);
    if (history.length === 0) {
      throw new ContextError("NOT_FOUND", `fork: no message "${atMessageId}" in session "${sessionId}"`);
    }
    const info = await this.create(name, { parentSessionId: sessionId });
    const copies = history.map((message) => ({ ...message, id: crypto.randomUUID() }));
    await this.appendAll(info.id, copies, null);
    return (await this.get(info.id)) ?? info;
  }

  addCompaction(sessionId: string, summary: string, fromId: string, toId: string): Promise<StoredCompaction> {
    return this.getSession(sessionId).addCompaction(summary, fromId, toId);
  }

  getCompactions(sessionId: string): Promise<StoredCompaction[]> {
    return this.getSession(sessionId).getCompactions();
  }

  /**
   * Ends the session (`end_reason: "compaction"`) and starts a continuation whose first message carries
   * the summary.
   */
  async compactAndSplit(sessionId: string, summary: string, name?: string): Promise<SessionInfo> {
    const old = await this.get(sessionId);
    if (old === null) throw new ContextError("NOT_FOUND", `compactAndSplit: no session "${sessionId}"`);
    await this.#backend.registry.update(sessionId, { endReason: "compaction" });
    const createOptions: CreateSessionOptions = { parentSessionId: sessionId };
    if (old.model != null) createOptions.model = old.model;
    if (old.source != null) createOptions.source = old.source;
    const info = await this.create(name ?? old.name, createOptions);
    await this.append(info.id, {
      id: crypto.randomUUID(),
      role: "assistant",
      parts: [{ type: "text", text: `${continuationPreamble}\n\n${summary}` }],
    });
    return (await this.get(info.id)) ?? info;
  }

  async addUsage(sessionId: string, inputTokens: number, outputTokens: number, cost: number): Promise<void> {
    checkUsageArguments(inputTokens, outputTokens, cost);
    await this.#backend.registry.addUsage(sessionId, inputTokens, outputTokens, cost);
  }

  // ── Search ──────────────────────────────────────────────────────────────────────────────────────────

  /** Full-text search over every session's messages; each hit names its `sessionId`. */
  search(query: string, options: { limit?: number } = {}): Promise<SearchResult[]> {
    return this.#backend.searchMessages(query, options.limit ?? 20);
  }

  // ── Internals ───────────────────────────────────────────────────────────────────────────────────────

  #historyProvider(): SearchProvider {
    return {
      get: async () => {
        const count = (await this.list()).length;
        if (count === 0) return null;
        return `${count} session${count === 1 ? "" : "s"} available for search.`;
      },
      search: async (query) => formatSearchResults(await this.search(query, { limit: 10 })),
    };
  }

  #emit(event: SessionManagerEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        const result = listener(event) as unknown;
        if (result instanceof Promise) result.catch(() => undefined);
      } catch {
        // A listener's failure never fails the operation that emitted the event.
      }
    }
  }

  async #touch(sessionId: string): Promise<void> {
    await this.#backend.registry.touch(sessionId);
  }
}

/** Search hits as the model reads them: `[role] text`, separated by rules; `null` for none. */
export function formatSearchResults(results: readonly SearchResult[]): string | null {
  if (results.length === 0) return null;
  return results.map((result) => `[${result.role}] ${result.content}`).join("\n---\n");
}
