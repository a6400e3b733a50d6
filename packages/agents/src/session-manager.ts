import { sessionSearchTool } from "@contextblocks/ai";
import type { ContextTracer, WritableContextProvider } from "@contextblocks/core";
import {
  SessionManager as BaseSessionManager,
  SessionBuilder,
  type SessionMessage,
  type StoredCompaction,
} from "@contextblocks/sessions";
import type {
  CompactAfterOptions,
  CompactFunction,
  CompactionErrorHandler,
} from "@contextblocks/sessions/compaction";
import type { SessionContextOptions } from "@contextblocks/sessions/store-kit";
import type { ToolSet } from "ai";
import { agentsBlockOptions } from "./agents-block-options.js";
import { asyncResult } from "./async-result.js";
import { backendOf, type SessionSource } from "./backend.js";
import { Session } from "./session.js";

/**
 * Cloudflare agents' `SessionManager` on contextblocks. `new SessionManager(this)` / `SessionManager.create(this)`
 * take an Agent (or a backend); `getSession(id)` returns this package's `Session` (agents' methods, text tool
 * results). The registry methods that are synchronous in agents (`create`, `get`, `list`, `rename`,
 * `addUsage`, `search`) return promises here, because the same manager runs on Postgres: reading a property
 * of the promise without `await` throws an error that says so. The manager is its own builder, as in agents
 * (`withContext`, `withCachedPrompt`, `onCompaction`, …), and keeps agents' per-session message methods
 * (`append`, `upsert`, `appendAll`, `getHistory`, …), which forward to `getSession(id)`: contextblocks'
 * `SessionManager` has neither.
 */
export class SessionManager extends BaseSessionManager {
  /** Live: every session `getSession` builds reads it then. */
  readonly #builder: SessionBuilder;

  constructor(source: SessionSource) {
    const builder = new SessionBuilder(backendOf(source, "new SessionManager"));
    super(builder);
    this.#builder = builder;
  }

  static create(source: SessionSource): SessionManager {
    return new SessionManager(source);
  }

  protected override sessionClass(): typeof Session {
    return Session;
  }

  override getSession(sessionId: string): Session {
    return super.getSession(sessionId) as Session;
  }

  override create(...args: Parameters<BaseSessionManager["create"]>) {
    return asyncResult(super.create(...args), "SessionManager.create");
  }
  override get(...args: Parameters<BaseSessionManager["get"]>) {
    return asyncResult(super.get(...args), "SessionManager.get");
  }
  override list(...args: Parameters<BaseSessionManager["list"]>) {
    return asyncResult(super.list(...args), "SessionManager.list");
  }
  override rename(...args: Parameters<BaseSessionManager["rename"]>) {
    return asyncResult(super.rename(...args), "SessionManager.rename");
  }
  override addUsage(...args: Parameters<BaseSessionManager["addUsage"]>) {
    return asyncResult(super.addUsage(...args), "SessionManager.addUsage");
  }
  override search(...args: Parameters<BaseSessionManager["search"]>) {
    return asyncResult(super.search(...args), "SessionManager.search");
  }

  /**
   * Deletes the session and everything it owned, the blocks kept under agents' keys (`memory_chat-1`) and
   * their versions included: the session is resolved first, so the backend knows which labels it declared.
   */
  override async delete(sessionId: string): Promise<void> {
    // An id the manager refuses is refused by `delete`'s own check, naming `delete`.
    if (typeof sessionId === "string" && sessionId !== "") void this.getSession(sessionId).context;
    await super.delete(sessionId);
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
    return sessionSearchTool(this);
  }
}
