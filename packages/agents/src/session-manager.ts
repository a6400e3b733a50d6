import { sessionSearchTool } from "@contextblocks/ai";
import { ContextError, type ContextTracer, type WritableContextProvider } from "@contextblocks/core";
import {
  SessionManager as BaseSessionManager,
  type SearchResult,
  type SessionBackend,
  SessionBuilder,
  type SessionInfo,
  type SessionManagerListener,
  type SessionMessage,
  type StoredCompaction,
  type SynchronousSessionManager,
} from "@contextblocks/sessions";
import type {
  CompactAfterOptions,
  CompactFunction,
  CompactionErrorHandler,
} from "@contextblocks/sessions/compaction";
import type {
  CreateSessionOptions,
  ListSessionsOptions,
  SessionContextOptions,
} from "@contextblocks/sessions/store-kit";
import type { ToolSet } from "ai";
import { agentsBlockOptions } from "./agents-block-options.js";
import { asyncResult } from "./async-result.js";
import { backendOf, type SessionSource } from "./backend.js";
import { Session } from "./session.js";

/** contextblocks' manager building this package's `Session`s: what the compatibility manager runs on. */
class ManagerCore extends BaseSessionManager {
  protected override sessionClass(): typeof Session {
    return Session;
  }

  override getSession(sessionId: string): Session {
    return super.getSession(sessionId) as Session;
  }
}

/**
 * Cloudflare agents' `SessionManager` on contextblocks. `new SessionManager(this)` / `SessionManager.create(this)`
 * take an Agent (or a backend); `getSession(id)` returns this package's `Session` (agents' methods, text tool
 * results). As in agents, `create`, `get`, `list`, `rename` and `addUsage` answer at once (the registry is the
 * Durable Object's SQLite, or better-sqlite3, or memory: `SessionManager.synchronous` of
 * `@contextblocks/sessions`); on a backend whose registry is async (Postgres) they refuse, naming the
 * manager to use there. `search` answers at once too where the backend's search can; elsewhere it returns a
 * promise, and reading a property of it without `await` throws an error that says so. The manager is its own
 * builder, as in agents (`withContext`, `withCachedPrompt`, `onCompaction`, …), and keeps agents' per-session
 * message methods (`append`, `upsert`, `appendAll`, `getHistory`, …), which forward to `getSession(id)`.
 */
export class SessionManager {
  /** Live: every session `getSession` builds reads it then. */
  readonly #builder: SessionBuilder;
  readonly #core: ManagerCore;

  constructor(source: SessionSource) {
    this.#builder = new SessionBuilder(backendOf(source, "new SessionManager"));
    this.#core = new ManagerCore(this.#builder);
  }

  static create(source: SessionSource): SessionManager {
    return new SessionManager(source);
  }

  /** The backend every session of this manager lives in. */
  get backend(): SessionBackend {
    return this.#core.backend;
  }

  /**
   * contextblocks' own manager underneath (its registry methods return promises), for what takes one:
   * `createInspector({ sessions: manager.contextblocks })` of `@contextblocks/inspector`, `sessionSearchTool`
   * of `@contextblocks/ai`. Its `getSession` gives this package's `Session`s, the same ones.
   */
  get contextblocks(): BaseSessionManager {
    return this.#core;
  }

  /** Hears sessions created and deleted and the events of every session (`SessionManager.subscribe`). */
  subscribe(listener: SessionManagerListener): () => void {
    return this.#core.subscribe(listener);
  }

  /** Adds a searchable block over every session's messages, as agents' `withSearchableHistory`. */
  withSearchableHistory(label: string): this {
    this.#core.withSearchableHistory(label);
    return this;
  }

  getSession(sessionId: string): Session {
    return this.#core.getSession(sessionId);
  }

  create(name: string, options?: CreateSessionOptions): SessionInfo {
    return this.#synchronous("create").create(name, options);
  }

  get(sessionId: string): SessionInfo | null {
    return this.#synchronous("get").get(sessionId);
  }

  /** Every session (or the first `limit`), most recently updated first. */
  list(options?: ListSessionsOptions): SessionInfo[] {
    return this.#synchronous("list").list(options);
  }

  rename(sessionId: string, name: string): void {
    this.#synchronous("rename").rename(sessionId, name);
  }

  addUsage(sessionId: string, inputTokens: number, outputTokens: number, cost: number): void {
    this.#synchronous("addUsage").addUsage(sessionId, inputTokens, outputTokens, cost);
  }

  /**
   * Full-text search over every session's messages; each hit names its `sessionId`. Answered at once, as in
   * agents, where the backend's search can be (an Agent on a Durable Object, ctx.storage, a better-sqlite3
   * Database, memory: the messages appended since the last search are indexed first, in the same call).
   * Elsewhere (Postgres) the value is a promise, which `await` reads as the hits (as it reads the hits
   * themselves); reading it as the hits without `await` throws an error that says so.
   */
  search(query: string, options?: { limit?: number }): SearchResult[] {
    const atOnce = this.#core.synchronous?.search;
    if (atOnce !== undefined) return atOnce(query, options);
    return asyncResult(
      this.#core.search(query, options),
      "SessionManager.search",
      "this backend's search cannot answer at once",
    ) as unknown as SearchResult[];
  }

  /**
   * Deletes the session and everything it owned, the blocks kept under agents' keys (`memory_chat-1`) and
   * their versions included: the session is resolved first, so the backend knows which labels it declared.
   */
  async delete(sessionId: string): Promise<void> {
    // An id the manager refuses is refused by `delete`'s own check, naming `delete`.
    if (typeof sessionId === "string" && sessionId !== "") void this.getSession(sessionId).context;
    await this.#core.delete(sessionId);
  }

  /** A new session holding copies (new ids) of the path root..`atMessageId`, overlays applied. */
  fork(sessionId: string, atMessageId: string, name: string): Promise<SessionInfo> {
    return this.#core.fork(sessionId, atMessageId, name);
  }

  /** Ends the session and starts a continuation whose first message carries the summary. */
  compactAndSplit(sessionId: string, summary: string, name?: string): Promise<SessionInfo> {
    return this.#core.compactAndSplit(sessionId, summary, name);
  }

  /** The registry's methods answered at once, or a refusal naming `method` where they cannot be. */
  #synchronous(method: string): SynchronousSessionManager {
    const synchronous = this.#core.synchronous;
    if (synchronous === undefined) {
      throw new ContextError(
        "UNSUPPORTED",
        `SessionManager.${method} answers at once, as in Cloudflare agents, which needs a registry that does (an Agent on a Durable Object, ctx.storage, a better-sqlite3 Database, a SessionProvider); the registry of this backend (${this.#core.backend.name}) does not: use SessionManager from @contextblocks/sessions there (its methods return promises)`,
      );
    }
    return synchronous;
  }

  /** As agents: a changed block waits for a refresh (`whenChanged: "wait"`) unless told otherwise. */
  withContext(label: string, options?: SessionContextOptions): this {
    this.#builder.withContext(label, agentsBlockOptions(options));
    return this;
  }

  withCachedPrompt(provider?: WritableContextProvider): this {
    this.#builder.withCachedPrompt(provider);
    return this;
  }

  onCompaction(compaction: CompactFunction): this {
    this.#builder.onCompaction(compaction);
    return this;
  }

  compactAfter(threshold: number, options?: CompactAfterOptions): this {
    this.#builder.compactAfter(threshold, options);
    return this;
  }

  onCompactionError(handler: CompactionErrorHandler): this {
    this.#builder.onCompactionError(handler);
    return this;
  }

  withTracer(tracer: ContextTracer): this {
    this.#builder.withTracer(tracer);
    return this;
  }

  async append(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    await this.getSession(sessionId).appendMessage(message, parentId);
    return message.id;
  }

  /** Updates the message when its id exists in the session (its parent stays), appends it otherwise. */
  async upsert(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    await this.getSession(sessionId).upsertMessage(message, { parentId });
    return message.id;
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
    return parent ?? null;
  }

  getHistory(sessionId: string, leafId?: string | null): Promise<SessionMessage[]> {
    return this.getSession(sessionId).getHistory(leafId);
  }

  /** agents' name: the number of messages on the session's active path. */
  getMessageCount(sessionId: string): Promise<number> {
    return this.getSession(sessionId).getPathLength();
  }

  clearMessages(sessionId: string): Promise<void> {
    return this.getSession(sessionId).clearMessages();
  }

  deleteMessages(sessionId: string, messageIds: string[]): Promise<void> {
    return this.getSession(sessionId).deleteMessages(messageIds);
  }

  getBranches(sessionId: string, messageId: string): Promise<SessionMessage[]> {
    return this.getSession(sessionId).getBranches(messageId);
  }

  addCompaction(sessionId: string, summary: string, fromId: string, toId: string): Promise<StoredCompaction> {
    return this.getSession(sessionId).addCompaction(summary, fromId, toId);
  }

  getCompactions(sessionId: string): Promise<StoredCompaction[]> {
    return this.getSession(sessionId).getCompactions();
  }

  /** agents' `session_search` tool over every session's messages (text results). */
  tools(): ToolSet {
    return sessionSearchTool(this.#core);
  }
}
