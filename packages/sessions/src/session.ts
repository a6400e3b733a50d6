import {
  type ContextToolSet,
  contextTools,
  loadedEntriesFromMessages,
  replaceUnloadedEntries,
} from "@contextblocks/ai";
import {
  type AnyContextProvider,
  type ContextBlock,
  ContextBlocks,
  type ContextConfig,
  ContextError,
  type LoadedEntry,
  SYSTEM_PROMPT_LABEL,
  type WritableContextProvider,
} from "@contextblocks/core";
import { SqliteContextProvider } from "@contextblocks/sqlite";
import type { UIMessage } from "ai";
import type {
  CompactAfterOptions,
  CompactFunction,
  CompactionErrorHandler,
  CompactResult,
  SessionTokenCounter,
} from "./compaction/types.js";
import { checkSessionMessage, kindOf, type SessionMessage } from "./message.js";
import { estimateMessageTokens } from "./message-tokens.js";
import { compactionRangeOf } from "./overlays.js";
import { isSqlHost, type ResolvedHost, resolveHost, type SessionHost } from "./session-host.js";
import {
  isSessionProvider,
  type RecentHistoryResult,
  type SearchResult,
  type SessionProvider,
  type StoredCompaction,
} from "./session-provider.js";

/** A block as the session reports it: core's block plus `isSkill` (the seed's name for loadable). */
export type SessionContextBlock = ContextBlock & { isSkill: boolean };

/** `withContext(label, options)`: a block config without its label. */
export type SessionContextOptions = Omit<ContextConfig, "label">;

/** Options of the direct constructor `new Session(provider, options)`. */
export interface SessionOptions {
  /** Blocks of the system prompt, in order. */
  context?: ContextConfig[];
  /** Persists the frozen prompt (default: none; `Session.create(...).withCachedPrompt()` wires SQLite). */
  promptStore?: WritableContextProvider;
  /** Counts tokens for automatic compaction. */
  tokenCounter?: SessionTokenCounter;
  onCompactionError?: CompactionErrorHandler;
}

/** The settings a builder collects before the session resolves (also what a manager hands each session). */
export interface SessionSettings {
  contexts: ContextConfig[];
  /** `true`: the SQLite prompt store of the session's database; a provider: that one. */
  cachedPrompt?: true | WritableContextProvider | undefined;
  compaction?: CompactFunction | undefined;
  threshold?: number | undefined;
  tokenCounter?: SessionTokenCounter | undefined;
  onCompactionError?: CompactionErrorHandler | undefined;
}

interface Resolved {
  provider: SessionProvider;
  context: ContextBlocks;
}

/** Marks the builder's construction: the host comes after. */
const deferred = Symbol("deferred session host");

/**
 * A conversation: messages as a tree in a `SessionProvider`, the system prompt from context blocks
 * (core's `ContextBlocks`), the AI SDK tools of those blocks, search, and compaction.
 *
 * ```ts
 * const session = Session.create(ctx.storage)
 *   .forSession("chat-1")
 *   .withContext("soul", { provider: { get: async () => "You are helpful." } })
 *   .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
 *   .withCachedPrompt();
 * ```
 */
export class Session {
  #pendingHost: SessionHost | null;
  #sessionId = "";
  readonly #settings: SessionSettings = { contexts: [] };
  #resolved: Resolved | null = null;
  /** Running token estimate of the active path for the default counter (no history read per append). */
  #pathTokens: number | null = null;

  /**
   * The direct form: a provider and options. Blocks without a provider need a `SqliteSessionProvider`
   * (its database stores them); nothing is read until first use.
   */
  constructor(provider: SessionProvider, options: SessionOptions = {}) {
    if (provider === (deferred as unknown)) {
      this.#pendingHost = null;
      return;
    }
    if (!isSessionProvider(provider)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `new Session: expected a SessionProvider (use Session.create for a database), got ${kindOf(provider)}`,
      );
    }
    this.#pendingHost = provider;
    this.#settings.contexts = [...(options.context ?? [])];
    this.#settings.cachedPrompt = options.promptStore;
    this.#settings.tokenCounter = options.tokenCounter;
    this.#settings.onCompactionError = options.onCompactionError;
  }

  /**
   * The builder: anything with SQLite (`ctx.storage`, `ctx`, an Agent's `sql`, better-sqlite3, a
   * `SqlClient`) or a `SessionProvider`. Nothing is read or created until first use.
   */
  static create(host: SessionHost): Session {
    if (!isSqlHost(host) && !isSessionProvider(host)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `Session.create: expected a database or a SessionProvider, got ${kindOf(host)}`,
      );
    }
    const session = new Session(deferred as unknown as SessionProvider);
    session.#pendingHost = host;
    return session;
  }

  // ── Builder ─────────────────────────────────────────────────────────────────────────────────────────

  /** Keeps this session's messages, blocks and prompt apart from other sessions in the same database. */
  forSession(sessionId: string): this {
    this.#beforeUse("forSession");
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      throw new ContextError(
        "INVALID_CONFIG",
        `forSession: the session id must be a non-empty string, got ${kindOf(sessionId)}`,
      );
    }
    this.#sessionId = sessionId;
    return this;
  }

  /** Adds a block; without a `provider` it is stored in SQLite, namespaced by the session. */
  withContext(label: string, options: SessionContextOptions = {}): this {
    this.#beforeUse("withContext");
    this.#settings.contexts.push({ ...options, label });
    return this;
  }

  /** Persists the frozen prompt (in SQLite unless a provider is given) so it survives hibernation. */
  withCachedPrompt(provider?: WritableContextProvider): this {
    this.#beforeUse("withCachedPrompt");
    this.#settings.cachedPrompt = provider ?? true;
    return this;
  }

  /** The compaction function (`createCompactFunction` from `@contextblocks/sessions/compaction`). */
  onCompaction(compaction: CompactFunction): this {
    if (typeof compaction !== "function") {
      throw new ContextError(
        "INVALID_CONFIG",
        `onCompaction: expected a function, got ${kindOf(compaction)}`,
      );
    }
    this.#settings.compaction = compaction;
    return this;
  }

  /** Compacts automatically after an append when the estimate passes `threshold` tokens. */
  compactAfter(threshold: number, options: CompactAfterOptions = {}): this {
    if (!Number.isFinite(threshold) || threshold <= 0) {
      throw new ContextError(
        "INVALID_CONFIG",
        `compactAfter: the threshold must be a positive number, got ${threshold}`,
      );
    }
    this.#settings.threshold = threshold;
    if (options.tokenCounter !== undefined) this.#settings.tokenCounter = options.tokenCounter;
    return this;
  }

  /** Hears automatic compaction failures (default: `console.warn`). */
  onCompactionError(handler: CompactionErrorHandler): this {
    this.#settings.onCompactionError = handler;
    return this;
  }

  /** Used by `SessionManager`: the manager's settings for one of its sessions. */
  static fromSettings(host: SessionHost, sessionId: string, settings: SessionSettings): Session {
    const session = Session.create(host).forSession(sessionId);
    session.#settings.contexts = settings.contexts.map((config) => ({ ...config }));
    session.#settings.cachedPrompt = settings.cachedPrompt;
    session.#settings.compaction = settings.compaction;
    session.#settings.threshold = settings.threshold;
    session.#settings.tokenCounter = settings.tokenCounter;
    session.#settings.onCompactionError = settings.onCompactionError;
    return session;
  }

  // ── Messages ────────────────────────────────────────────────────────────────────────────────────────

  getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    return Promise.resolve(this.#use().provider.getHistory(leafId));
  }

  /**
   * The newest messages of the active path whose stored size fits `maxBytes` (and at least `minMessages`):
   * a wake reads a bounded window. Providers without it fall back to the whole path.
   */
  async getRecentHistory(maxBytes: number, minMessages = 1): Promise<RecentHistoryResult> {
    const { provider } = this.#use();
    if (provider.getRecentHistory) return provider.getRecentHistory(null, maxBytes, minMessages);
    const messages = await provider.getHistory();
    return { messages, truncated: false, totalContentBytes: JSON.stringify(messages).length };
  }

  getMessage(id: string): Promise<SessionMessage | null> {
    return Promise.resolve(this.#use().provider.getMessage(id));
  }

  getLatestLeaf(): Promise<SessionMessage | null> {
    return Promise.resolve(this.#use().provider.getLatestLeaf());
  }

  getBranches(messageId: string): Promise<SessionMessage[]> {
    return Promise.resolve(this.#use().provider.getBranches(messageId));
  }

  getPathLength(leafId?: string | null): Promise<number> {
    return Promise.resolve(this.#use().provider.getPathLength(leafId));
  }

  /**
   * Stores a message under `parentId` (omitted: the latest leaf; `null`: a new root). Then, past the
   * `compactAfter` threshold, compacts; a failed compaction goes to `onCompactionError` and never fails
   * the append (the message is stored).
   */
  async appendMessage(message: SessionMessage, parentId?: string | null): Promise<void> {
    const checked = checkSessionMessage(message, "appendMessage");
    await this.#use().provider.appendMessage(checked, parentId);
    if (this.#pathTokens !== null) {
      this.#pathTokens = parentId === undefined ? this.#pathTokens + estimateMessageTokens([checked]) : null;
    }
    await this.#compactIfOverThreshold();
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    await this.#use().provider.updateMessage(checked);
    this.#pathTokens = null;
  }

  async deleteMessages(messageIds: string[]): Promise<void> {
    await this.#use().provider.deleteMessages(messageIds);
    this.#pathTokens = null;
  }

  /** Deletes every message and overlay, and forgets loaded skills. */
  async clearMessages(): Promise<void> {
    const { provider, context } = this.#use();
    await provider.clearMessages();
    for (const entry of context.loadedEntries()) context.unloadEntry(entry.label, entry.key);
    this.#pathTokens = null;
  }

  // ── Compaction ──────────────────────────────────────────────────────────────────────────────────────

  addCompaction(summary: string, fromMessageId: string, toMessageId: string): Promise<StoredCompaction> {
    this.#pathTokens = null;
    return Promise.resolve(this.#use().provider.addCompaction(summary, fromMessageId, toMessageId));
  }

  getCompactions(): Promise<StoredCompaction[]> {
    return Promise.resolve(this.#use().provider.getCompactions());
  }

  /**
   * Runs the compaction function on the path to `leafId` (default: the latest leaf) and stores its overlay;
   * then refreshes the frozen prompt (the one deliberate cache bust: the history prefix changed anyway).
   * `null` when there is no function or it found nothing to compact.
   */
  async compact(leafId?: string | null): Promise<CompactResult | null> {
    const compaction = this.#settings.compaction;
    if (compaction === undefined) return null;
    const { provider, context } = this.#use();
    const history = await provider.getHistory(leafId);
    const result = await compaction(history, { tokenCounter: this.#settings.tokenCounter });
    if (result === null) return null;
    await provider.addCompaction(result.summary, result.fromMessageId, result.toMessageId);
    this.#pathTokens = null;
    if (context.getConfigs().length > 0) await context.refreshSystemPrompt();
    return result;
  }

  async #compactIfOverThreshold(): Promise<void> {
    const threshold = this.#settings.threshold;
    if (threshold === undefined || this.#settings.compaction === undefined) return;
    try {
      if ((await this.#estimateTokens()) <= threshold) return;
      await this.compact();
    } catch (error) {
      try {
        const handler = this.#settings.onCompactionError;
        if (handler) await handler(error);
        else console.warn("contextblocks sessions: automatic compaction failed", error);
      } catch {
        // The handler's own failure must not fail the append either.
      }
    }
  }

  /** Stored parts of the path plus the frozen prompt, or the configured counter's figure. */
  async #estimateTokens(): Promise<number> {
    const { provider, context } = this.#use();
    const hasBlocks = context.getConfigs().length > 0;
    const systemPrompt = hasBlocks ? await context.freezeSystemPrompt() : "";
    const counter = this.#settings.tokenCounter;
    if (counter !== undefined) {
      const messages = await provider.getHistory();
      return counter({ messages, systemPrompt, contextBlocks: context.getBlocks() });
    }
    if (this.#pathTokens === null) this.#pathTokens = estimateMessageTokens(await provider.getHistory());
    return this.#pathTokens + context.estimateTokens(systemPrompt);
  }

  // ── Context blocks ──────────────────────────────────────────────────────────────────────────────────

  /** The block as last read (blocks are read on first use: `freezeSystemPrompt`, `tools`, a write). */
  getContextBlock(label: string): SessionContextBlock | null {
    const block = this.#use().context.getBlock(label);
    return block === null ? null : withSkillFlag(block);
  }

  getContextBlocks(): SessionContextBlock[] {
    return this.#use().context.getBlocks().map(withSkillFlag);
  }

  async replaceContextBlock(label: string, content: string): Promise<SessionContextBlock> {
    return withSkillFlag(await this.#use().context.setBlock(label, content));
  }

  async appendContextBlock(label: string, content: string): Promise<SessionContextBlock> {
    return withSkillFlag(await this.#use().context.appendToBlock(label, content));
  }

  /** Adds a block at run time (stored in SQLite without a provider); the prompt changes on refresh. */
  async addContext(label: string, options: SessionContextOptions = {}): Promise<SessionContextBlock> {
    const { context } = this.#use();
    return withSkillFlag(await context.addBlock({ ...options, label }));
  }

  removeContext(label: string): boolean {
    return this.#use().context.removeBlock(label);
  }

  freezeSystemPrompt(): Promise<string> {
    return this.#use().context.freezeSystemPrompt();
  }

  refreshSystemPrompt(): Promise<string> {
    return this.#use().context.refreshSystemPrompt();
  }

  /** The AI SDK tools the blocks allow (`set_context`, `search_context`, `load_context`, `unload_context`). */
  async tools(): Promise<ContextToolSet> {
    const { context } = this.#use();
    await context.load();
    return contextTools(context);
  }

  /**
   * Unloads a skill: every stored `load_context` result for (label, key) is replaced by a short marker
   * (the tokens are reclaimed from the next turn on); the skill can be loaded again. False when nothing
   * was loaded.
   */
  async unloadSkill(label: string, key: string): Promise<boolean> {
    const { provider, context } = this.#use();
    const wasLoaded = context.unloadEntry(label, key);
    const history = await provider.getHistory();
    const changed = unloadedInHistory(history, { label, key });
    for (const message of changed) await provider.updateMessage(message);
    if (changed.length > 0) this.#pathTokens = null;
    return wasLoaded || changed.length > 0;
  }

  /**
   * The loaded skills as `label:key` strings, read from the stored history (so they survive hibernation):
   * a `load_context` result not unloaded since.
   */
  async getLoadedSkillKeys(): Promise<Set<string>> {
    const { provider } = this.#use();
    const history = await provider.getHistory();
    const loaded = loadedEntriesFromMessages(history as unknown as UIMessage[]);
    // A result already replaced by `unloadSkill` reads as loaded to the transcript rule: probe it.
    const live = loaded.filter((entry) => unloadedInHistory(history, entry).length > 0);
    return new Set(live.map((entry) => `${entry.label}:${entry.key}`));
  }

  // ── Search ──────────────────────────────────────────────────────────────────────────────────────────

  /** Full-text search over this session's message text. Throws `UNSUPPORTED` when the provider cannot. */
  async search(query: string, options: { limit?: number } = {}): Promise<SearchResult[]> {
    const { provider } = this.#use();
    if (typeof provider.searchMessages !== "function") {
      throw new ContextError("UNSUPPORTED", "search: this session's provider has no searchMessages method");
    }
    return provider.searchMessages(query, options.limit ?? 20);
  }

  // ── Resolution ──────────────────────────────────────────────────────────────────────────────────────

  #beforeUse(method: string): void {
    if (this.#resolved !== null) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${method}: the session is already in use; builder methods go before the first call (use addContext at run time)`,
      );
    }
  }

  #use(): Resolved {
    if (this.#resolved === null) {
      const host = this.#pendingHost;
      if (host === null) throw new ContextError("INVALID_CONFIG", "Session: no storage was given");
      this.#resolved = this.#resolve(resolveHost(host, this.#sessionId));
    }
    return this.#resolved;
  }

  #resolve(host: ResolvedHost): Resolved {
    const { client, sessionId } = host;
    const namespace = sessionId === "" ? undefined : sessionId;
    const defaultProvider =
      client === null
        ? null
        : (label: string): AnyContextProvider => new SqliteContextProvider(client, { label, namespace });
    const cached = this.#settings.cachedPrompt;
    let promptStore: WritableContextProvider | null = null;
    if (cached === true) {
      if (client === null) {
        throw new ContextError(
          "INVALID_CONFIG",
          "withCachedPrompt(): this session's provider has no SQLite database; pass the prompt store to withCachedPrompt(provider)",
        );
      }
      promptStore = new SqliteContextProvider(client, { label: SYSTEM_PROMPT_LABEL, namespace });
    } else if (cached !== undefined) {
      promptStore = cached;
    }
    const context = new ContextBlocks(this.#settings.contexts, promptStore, defaultProvider);
    return { provider: host.provider, context };
  }
}

function withSkillFlag(block: ContextBlock): SessionContextBlock {
  return { ...block, isSkill: block.isSkill };
}

/**
 * The stored messages whose `load_context` result for `entry` is still in full, with the result replaced
 * by ai's unload marker. It asks `@contextblocks/ai` (one owner of the transcript rules): the history plus
 * one unload call for the entry, and keeps the messages its rewrite changed. Summary messages of overlays
 * are not stored, so they are left out.
 */
function unloadedInHistory(history: readonly SessionMessage[], entry: LoadedEntry): SessionMessage[] {
  const probe = {
    id: "unload-probe",
    role: "assistant",
    parts: [
      {
        type: "tool-unload_context",
        toolCallId: "unload-probe",
        state: "output-available",
        input: { label: entry.label, key: entry.key },
        output: "unloaded",
      },
    ],
  };
  const transcript = [...history, probe] as unknown as UIMessage[];
  const rewritten = replaceUnloadedEntries(transcript) as unknown as SessionMessage[];
  const changed: SessionMessage[] = [];
  history.forEach((message, index) => {
    const after = rewritten[index];
    if (after !== undefined && after !== message && compactionRangeOf(message) === null) changed.push(after);
  });
  return changed;
}
