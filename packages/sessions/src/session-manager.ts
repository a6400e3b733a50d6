import { ContextError, type SearchProvider, type WritableContextProvider } from "@contextblocks/core";
import { type SqlClient, type SqlSource, sql, toSqlClient } from "@contextblocks/sql";
import { type Tool, tool } from "ai";
import { z } from "zod";
import type { CompactAfterOptions, CompactFunction, CompactionErrorHandler } from "./compaction/types.js";
import { kindOf, type SessionMessage } from "./message.js";
import { searchMessageIndex } from "./message-search.js";
import { schemaReady } from "./schema.js";
import { Session, type SessionContextOptions, type SessionSettings } from "./session.js";
import type { SearchResult, StoredCompaction } from "./session-provider.js";
import type { CreateSessionOptions, SessionInfo } from "./session-registry.js";

export type { CreateSessionOptions, SessionInfo };

/** Text that opens the first message of a session made by `compactAndSplit`. */
export const continuationPreamble = "[Context from previous session]";

const now = sql`strftime('%Y-%m-%d %H:%M:%f', 'now')`;

/**
 * Many named sessions in one database (one Durable Object): a registry in `assistant_sessions`, each
 * session a `Session` with the manager's builder settings, search across sessions and a `session_search`
 * tool.
 *
 * ```ts
 * const manager = SessionManager.create(ctx.storage)
 *   .withContext("memory", { maxTokens: 1100 })
 *   .withCachedPrompt()
 *   .withSearchableHistory("history");
 * const chat = await manager.create("Support chat");
 * await manager.append(chat.id, message);
 * ```
 */
export class SessionManager {
  readonly #client: SqlClient;
  readonly #settings: SessionSettings = { contexts: [] };
  readonly #sessions = new Map<string, Session>();
  #historyLabel: string | undefined;
  #ready: Promise<void> | undefined;

  constructor(source: SqlSource) {
    this.#client = toSqlClient(source);
    if (this.#client.dialect !== "sqlite") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SessionManager needs a SQLite database, got "${this.#client.dialect}"`,
      );
    }
  }

  static create(source: SqlSource): SessionManager {
    return new SessionManager(source);
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
        `getSession: the session id must be a non-empty string, got ${kindOf(sessionId)}`,
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
      session = Session.fromSettings(this.#client, sessionId, settings);
      this.#sessions.set(sessionId, session);
    }
    return session;
  }

  async create(name: string, options: CreateSessionOptions = {}): Promise<SessionInfo> {
    if (typeof name !== "string") {
      throw new ContextError("INVALID_INPUT", `create: the name must be a string, got ${kindOf(name)}`);
    }
    await this.#tables();
    const id = crypto.randomUUID();
    await this.#client.run(sql`
      INSERT INTO assistant_sessions (id, name, parent_session_id, model, source, created_at, updated_at)
      VALUES (${id}, ${name}, ${options.parentSessionId ?? null}, ${options.model ?? null},
        ${options.source ?? null}, ${now}, ${now})`);
    return (await this.get(id)) as SessionInfo;
  }

  async get(sessionId: string): Promise<SessionInfo | null> {
    await this.#tables();
    const rows = await this.#client
      .query<SessionInfo>`SELECT * FROM assistant_sessions WHERE id = ${sessionId}`;
    return rows[0] ?? null;
  }

  /** Every session, most recently updated first. */
  async list(): Promise<SessionInfo[]> {
    await this.#tables();
    return this.#client
      .query<SessionInfo>`SELECT * FROM assistant_sessions ORDER BY updated_at DESC, rowid DESC`;
  }

  async rename(sessionId: string, name: string): Promise<void> {
    await this.#tables();
    await this.#client.run(
      sql`UPDATE assistant_sessions SET name = ${name}, updated_at = ${now} WHERE id = ${sessionId}`,
    );
  }

  /** Deletes the session and its messages and overlays. */
  async delete(sessionId: string): Promise<void> {
    await this.getSession(sessionId).clearMessages();
    await this.#tables();
    await this.#client.query`DELETE FROM assistant_sessions WHERE id = ${sessionId}`;
    this.#sessions.delete(sessionId);
  }

  // ── Messages (each touches updated_at) ──────────────────────────────────────────────────────────────

  async append(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    await this.getSession(sessionId).appendMessage(message, parentId);
    await this.#touch(sessionId);
    return message.id;
  }

  /** Updates the message when its id exists in the session, appends it otherwise. */
  async upsert(sessionId: string, message: SessionMessage, parentId?: string | null): Promise<string> {
    const session = this.getSession(sessionId);
    if ((await session.getMessage(message?.id)) !== null) await session.updateMessage(message);
    else await session.appendMessage(message, parentId);
    await this.#touch(sessionId);
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
    await this.#touch(sessionId);
    return parent ?? null;
  }

  getHistory(sessionId: string, leafId?: string | null): Promise<SessionMessage[]> {
    return this.getSession(sessionId).getHistory(leafId);
  }

  /** Messages on the active path. */
  getMessageCount(sessionId: string): Promise<number> {
    return this.getSession(sessionId).getPathLength();
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
    await this.#client.run(
      sql`UPDATE assistant_sessions SET end_reason = 'compaction', updated_at = ${now} WHERE id = ${sessionId}`,
    );
    const createOptions: CreateSessionOptions = { parentSessionId: sessionId };
    if (old?.model != null) createOptions.model = old.model;
    if (old?.source != null) createOptions.source = old.source;
    const info = await this.create(name ?? old?.name ?? "Compacted", createOptions);
    await this.append(info.id, {
      id: crypto.randomUUID(),
      role: "assistant",
      parts: [{ type: "text", text: `${continuationPreamble}\n\n${summary}` }],
    });
    return (await this.get(info.id)) ?? info;
  }

  async addUsage(sessionId: string, inputTokens: number, outputTokens: number, cost: number): Promise<void> {
    for (const [name, value] of [
      ["inputTokens", inputTokens],
      ["outputTokens", outputTokens],
      ["cost", cost],
    ] as const) {
      if (!Number.isFinite(value)) {
        throw new ContextError(
          "INVALID_INPUT",
          `addUsage: ${name} must be a finite number, got ${String(value)}`,
        );
      }
    }
    await this.#tables();
    await this.#client.run(sql`UPDATE assistant_sessions SET
      input_tokens = input_tokens + ${inputTokens},
      output_tokens = output_tokens + ${outputTokens},
      estimated_cost = estimated_cost + ${cost},
      updated_at = ${now}
      WHERE id = ${sessionId}`);
  }

  // ── Search ──────────────────────────────────────────────────────────────────────────────────────────

  /** Full-text search over every session's messages; each hit names its `sessionId`. */
  async search(query: string, options: { limit?: number } = {}): Promise<SearchResult[]> {
    await this.#tables();
    return searchMessageIndex(this.#client, query, { limit: options.limit ?? 20 });
  }

  /** `session_search`: the model searches past conversations. Failures come back as `Error: …` text. */
  tools(): { session_search: Tool<{ query: string }, string> } {
    return {
      session_search: tool({
        description: "Search past conversations for relevant context. Searches across all sessions.",
        inputSchema: z.object({ query: z.string().describe("Search query") }),
        execute: async ({ query }) => {
          try {
            return formatResults(await this.search(query, { limit: 10 })) ?? "No results found.";
          } catch (error) {
            return `Error: ${error instanceof Error ? error.message : String(error)}`;
          }
        },
      }),
    };
  }

  // ── Internals ───────────────────────────────────────────────────────────────────────────────────────

  #historyProvider(): SearchProvider {
    return {
      get: async () => {
        const count = (await this.list()).length;
        if (count === 0) return null;
        return `${count} session${count === 1 ? "" : "s"} available for search.`;
      },
      search: async (query) => formatResults(await this.search(query, { limit: 10 })),
    };
  }

  #tables(): Promise<void> {
    this.#ready ??= (async () => {
      await schemaReady(this.#client);
      await this.#client.query`CREATE TABLE IF NOT EXISTS assistant_sessions (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        parent_session_id TEXT,
        model TEXT,
        source TEXT,
        input_tokens INTEGER DEFAULT 0,
        output_tokens INTEGER DEFAULT 0,
        estimated_cost REAL DEFAULT 0,
        end_reason TEXT,
        created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
        updated_at DATETIME DEFAULT CURRENT_TIMESTAMP
      )`;
    })();
    this.#ready.catch(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  async #touch(sessionId: string): Promise<void> {
    await this.#tables();
    await this.#client.run(sql`UPDATE assistant_sessions SET updated_at = ${now} WHERE id = ${sessionId}`);
  }
}

function formatResults(results: readonly SearchResult[]): string | null {
  if (results.length === 0) return null;
  return results.map((result) => `[${result.role}] ${result.content}`).join("\n---\n");
}
