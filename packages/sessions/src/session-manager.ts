import { ContextError, type SearchProvider } from "@contextblocks/core";
import { clipped, describeValue } from "@contextblocks/core/store-kit";
import { checkMessageId } from "./message.js";
import { Session, type SessionEvent } from "./session.js";
import { isSessionBackend, type SessionBackend } from "./session-backend.js";
import { copyBuilder, SessionBuilder, stateOf } from "./session-builder.js";
import type { CreateSessionOptions, ListSessionsOptions, SessionInfo } from "./session-registry.js";
import type { SearchResult } from "./session-store.js";
import {
  checkListLimit,
  checkSearchLimit,
  checkSessionText,
  checkUsageArguments,
  checkWellFormedText,
} from "./store-arguments.js";

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

/** `SessionManager.synchronous`: the registry's methods of the manager, answered at once. */
export interface SynchronousSessionManager {
  create(name: string, options?: CreateSessionOptions): SessionInfo;
  get(sessionId: string): SessionInfo | null;
  list(options?: ListSessionsOptions): SessionInfo[];
  rename(sessionId: string, name: string): void;
  addUsage(sessionId: string, inputTokens: number, outputTokens: number, cost: number): void;
  /**
   * `search` answered at once, where the backend's search answers synchronously too
   * (`SessionBackend.searchMessagesSync`); absent where it does not.
   */
  readonly search?: ((query: string, options?: { limit?: number }) => SearchResult[]) | undefined;
}

/** Text that opens the first message of a session made by `compactAndSplit`. */
export const continuationPreamble = "[Context from previous session]";

/**
 * Many named sessions in one database: a registry (`backend.registry`, the `assistant_sessions` rows
 * Cloudflare agents' Sessions API keeps), each session a `Session` built by the manager's `SessionBuilder`,
 * and search across sessions. A session's writes through `getSession(id)` touch its `updated_at`. The
 * `session_search` tool is `sessionSearchTool(manager)` in `@contextblocks/ai`.
 *
 * ```ts
 * const builder = new SessionBuilder(sqliteBackend(ctx.storage))
 *   .withContext("memory", { maxTokens: 1100 })
 *   .withCachedPrompt();
 * const manager = new SessionManager(builder).withSearchableHistory("history");
 * const chat = await manager.create("Support chat");
 * await manager.getSession(chat.id).appendMessage(message);
 * ```
 */
export class SessionManager {
  readonly #backend: SessionBackend;
  /** Builds each session; read at `getSession`, so it may still be configured until then. */
  readonly #builder: SessionBuilder;
  readonly #sessions = new Map<string, Session>();
  #searchableHistory: string | undefined;
  readonly #listeners = new Set<SessionManagerListener>();

  /** A manager over a backend, or over a builder whose settings every session gets. */
  constructor(source: SessionBackend | SessionBuilder) {
    const builder = source instanceof SessionBuilder ? source : undefined;
    const backend = builder === undefined ? source : builder.backend;
    if (!isSessionBackend(backend)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `new SessionManager: expected a SessionBackend (sqliteBackend(…), postgresBackend(…), inMemoryBackend()) or a SessionBuilder over one, got ${describeValue(builder === undefined ? source : "a builder given its collaborators")}`,
      );
    }
    this.#backend = backend;
    this.#builder = builder ?? new SessionBuilder(backend);
  }

  /** The backend every session of this manager lives in. */
  get backend(): SessionBackend {
    return this.#backend;
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
    this.#searchableHistory = label;
    return this;
  }

  /** The `Session` for an id: created on first access with the manager's settings, then cached. */
  getSession(sessionId: string): Session {
    checkSessionId(sessionId, "getSession");
    let session = this.#sessions.get(sessionId);
    if (session === undefined) {
      const builder = copyBuilder(this.#builder).forSession(sessionId);
      if (this.#searchableHistory !== undefined) {
        builder.withContext(this.#searchableHistory, {
          description: "Cross-session conversation history",
          provider: this.#historyProvider(),
        });
      }
      // Each write through the session touches its registry row, as the manager's own writes did.
      stateOf(builder).settings.afterWrite = (id) => this.#backend.registry.touch(id);
      const SessionClass = this.sessionClass();
      session = new SessionClass(builder);
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
    checkCreateArguments(name, options);
    return this.#created(await this.#backend.registry.create(crypto.randomUUID(), name, options));
  }

  get(sessionId: string): Promise<SessionInfo | null> {
    return this.#backend.registry.get(sessionId);
  }

  /**
   * Every session, most recently updated first (as Cloudflare agents' Sessions API `manager.list()`), or with
   * `{ limit }` the first `limit` of them: the registry is asked for only those rows.
   */
  async list(options: ListSessionsOptions = {}): Promise<SessionInfo[]> {
    const limit = listLimitOf(options);
    if (limit === undefined) return this.#backend.registry.list();
    // Sliced as well: a registry written before the option returns every row.
    return (await this.#backend.registry.list({ limit })).slice(0, limit);
  }

  /** Renames a session; `NOT_FOUND` for an unknown id. */
  async rename(sessionId: string, name: string): Promise<void> {
    checkRenameArguments(sessionId, name);
    await this.#backend.registry.update(sessionId, { name });
  }

  /**
   * `create`, `get`, `list`, `rename` and `addUsage` answered at once, with the same checks, rows and events,
   * where the backend's registry answers synchronously (`SessionRegistry.synchronous`: memory; SQLite on a
   * Durable Object or better-sqlite3); `undefined` on Postgres. Cloudflare agents' `SessionManager` is
   * synchronous: the compatibility manager of `@contextblocks/agents` is too, through this.
   */
  get synchronous(): SynchronousSessionManager | undefined {
    const registry = this.#backend.registry.synchronous;
    if (registry === undefined) return undefined;
    return {
      create: (name, options = {}) => {
        checkCreateArguments(name, options);
        return this.#created(registry.create(crypto.randomUUID(), name, options));
      },
      get: (sessionId) => registry.get(sessionId),
      list: (options = {}) => {
        const limit = listLimitOf(options);
        return limit === undefined ? registry.list() : registry.list({ limit }).slice(0, limit);
      },
      rename: (sessionId, name) => {
        checkRenameArguments(sessionId, name);
        registry.update(sessionId, { name });
      },
      addUsage: (sessionId, inputTokens, outputTokens, cost) => {
        checkUsageArguments(inputTokens, outputTokens, cost);
        registry.addUsage(sessionId, inputTokens, outputTokens, cost);
      },
      search: this.#searchAtOnce(),
    };
  }

  /** `search` answered at once (`SynchronousSessionManager.search`), or `undefined` where it cannot be. */
  #searchAtOnce(): SynchronousSessionManager["search"] {
    const backend = this.#backend;
    const searchMessagesSync = backend.searchMessagesSync;
    if (searchMessagesSync === undefined) return undefined;
    return (query, options = {}) => searchMessagesSync.call(backend, query, searchLimitOf(options));
  }

  /** Announces a session the registry just made (`session-created`) and returns its row. */
  #created(info: SessionInfo): SessionInfo {
    this.#emit({
      type: "session-created",
      sessionId: info.id,
      name: info.name,
      parentSessionId: info.parent_session_id,
    });
    return info;
  }

  /**
   * Deletes the session and everything it owned (`backend.deleteSession`): messages, overlays, search
   * rows, its blocks, its frozen prompt, its run state and its registry row.
   */
  async delete(sessionId: string): Promise<void> {
    checkSessionId(sessionId, "delete");
    await this.#backend.deleteSession(sessionId);
    this.#sessions.delete(sessionId);
    this.#emit({ type: "session-deleted", sessionId });
  }

  /** A new session holding copies (new ids) of the path root..`atMessageId`, overlays applied. */
  async fork(sessionId: string, atMessageId: string, name: string): Promise<SessionInfo> {
    checkMessageId(atMessageId, "atMessageId", "fork");
    const history = await this.getSession(sessionId).getHistory(atMessageId);
    if (history.length === 0) {
      throw new ContextError(
        "NOT_FOUND",
        `fork: no message "${clipped(atMessageId)}" in session "${clipped(sessionId)}"`,
      );
    }
    const info = await this.create(name, { parentSessionId: sessionId });
    const copies = history.map((message) => ({ ...message, id: crypto.randomUUID() }));
    await this.getSession(info.id).appendMessages(copies, null);
    return (await this.get(info.id)) ?? info;
  }

  /**
   * Ends the session (`end_reason: "compaction"`) and starts a continuation whose first message carries
   * the summary.
   */
  async compactAndSplit(sessionId: string, summary: string, name?: string): Promise<SessionInfo> {
    if (typeof summary !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `compactAndSplit: the summary must be a string, got ${describeValue(summary)}`,
      );
    }
    checkWellFormedText(summary, "summary", "compactAndSplit");
    if (name !== undefined) checkSessionText(name, "name", "compactAndSplit", { emptyAllowed: true });
    const old = await this.get(sessionId);
    if (old === null)
      throw new ContextError("NOT_FOUND", `compactAndSplit: no session "${clipped(sessionId)}"`);
    await this.#backend.registry.update(sessionId, { endReason: "compaction" });
    const createOptions: CreateSessionOptions = { parentSessionId: sessionId };
    if (old.model != null) createOptions.model = old.model;
    if (old.source != null) createOptions.source = old.source;
    const info = await this.create(name ?? old.name, createOptions);
    await this.getSession(info.id).appendMessage({
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

  /** Full-text search over every session's messages; each hit names its `sessionId`. */
  async search(query: string, options: { limit?: number } = {}): Promise<SearchResult[]> {
    return this.#backend.searchMessages(query, searchLimitOf(options));
  }

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
}

/** `create`'s name and options (each text within `maximumSessionTextLength`). */
function checkCreateArguments(name: unknown, options: unknown): asserts options is CreateSessionOptions {
  checkSessionText(name, "name", "create", { emptyAllowed: true });
  checkOptions(options, "create", "{ parentSessionId?, model?, source? }");
  const { parentSessionId, model, source } = options as CreateSessionOptions;
  for (const [what, value] of Object.entries({ parentSessionId, model, source })) {
    if (value !== undefined && value !== null)
      checkSessionText(value, what, "create", { emptyAllowed: true });
  }
}

/** `list`'s limit, checked; `undefined` for every session. */
/** The limit of a search's options, checked (20 when omitted, as agents' default). */
function searchLimitOf(options: { limit?: number }): number {
  checkOptions(options, "search", "{ limit? }");
  return checkSearchLimit(options.limit ?? 20);
}

function listLimitOf(options: unknown): number | undefined {
  checkOptions(options, "list", "{ limit? }");
  const { limit } = options as ListSessionsOptions;
  return limit === undefined ? undefined : checkListLimit(limit);
}

function checkRenameArguments(sessionId: unknown, name: unknown): void {
  checkSessionId(sessionId, "rename");
  checkSessionText(name, "name", "rename", { emptyAllowed: true });
}

/** A session id the manager is given: a non-empty string (`""` is no named session). */
function checkSessionId(sessionId: unknown, operation: string): void {
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: the session id must be a non-empty string, got ${describeValue(sessionId)}`,
    );
  }
}

/** An options argument: an object when given (`null` is refused by name, not read as a missing property). */
function checkOptions(options: unknown, operation: string, shape: string): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: expected options ${shape}, got ${describeValue(options)}`,
    );
  }
}

/** Search hits as the model reads them: `[role] text`, separated by rules; `null` for none. */
export function formatSearchResults(results: readonly SearchResult[]): string | null {
  if (results.length === 0) return null;
  return results.map((result) => `[${result.role}] ${result.content}`).join("\n---\n");
}
