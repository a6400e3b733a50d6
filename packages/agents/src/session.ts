import { loadedSkillKeys, unloadSkill } from "@contextblocks/ai";
import {
  type ContextBlock,
  type ContextConfig,
  ContextError,
  type ContextTracer,
  ContextBlocks as CoreContextBlocks,
  estimateTokens,
  type WritableContextProvider,
} from "@contextblocks/core";
import type { LoadedEntry } from "@contextblocks/core/store-kit";
import {
  type AppendOptions,
  Session as BaseSession,
  estimateMessageTokens,
  type SessionBackend,
  SessionBuilder,
  type SessionMessage,
  type SessionOptions,
} from "@contextblocks/sessions";
import type {
  CompactAfterOptions,
  CompactFunction,
  CompactionErrorHandler,
  CompactOutcome,
  CompactResult,
} from "@contextblocks/sessions/compaction";
import {
  compactionPrefix,
  type RecentHistoryResult,
  type SessionContextOptions,
  type SessionStore,
  type SessionStoreV1,
} from "@contextblocks/sessions/store-kit";
import type { ToolSet } from "ai";
import { agentsAppendText } from "./agents-append.js";
import { agentsBlockOptions } from "./agents-block-options.js";
import { agentsLeafId, isHeldAlready } from "./agents-message-tree.js";
import { backendOf, type SessionSource } from "./backend.js";
import { ContextBlocks } from "./context-blocks.js";
import {
  type Broadcaster,
  isBroadcaster,
  type MessageChangeListener,
  SessionStatus,
} from "./session-status.js";
import { agentsTools, type UnloadCallback } from "./tools.js";

/** What agents' `compact()` throws without `onCompaction()`; the words its users match on. */
export const NO_COMPACTION_MESSAGE = "No compaction function registered. Call onCompaction() first.";

/**
 * Cloudflare agents' `Session` (agents@0.22.0, `agents/experimental/memory/session`) on contextblocks:
 * contextblocks' `Session` with agents' construction and the methods agents has and it does not. The
 * session is its own builder, as in agents (`Session.create(this).withContext(…)` is used as the session);
 * the block methods (`getContextBlock`, `replaceContextBlock`, `appendContextBlock`, `addContext`,
 * `removeContext`, `freezeSystemPrompt`, `refreshSystemPrompt`) and the reads `getMessage`, `getLatestLeaf`,
 * `getBranches`, `getPathLength` forward to `session.context` and `session.store`, where contextblocks'
 * `Session` leaves them.
 *
 * - `Session.create(this)` (an Agent), `Session.create(ctx.storage)`, a better-sqlite3 `Database`, a
 *   `SessionProvider` (a message store) or a contextblocks `SessionBackend`.
 * - `forSession("chat-1")` stores blocks and the frozen prompt under agents' keys (`memory_chat-1`,
 *   `_system_prompt_chat-1`), so a database agents wrote reads as it was.
 * - `compact()` without `onCompaction()` throws "No compaction function registered".
 * - `tools()` resolves to AI SDK tools whose results are text; `setUnloadCallback`, `clearSkillState`,
 *   `unloadSkill`, `getLoadedSkillKeys`, `getHistoryRowStats` are here.
 */
export class Session extends BaseSession {
  /** Live: agents configures the session itself until first use (`withContext`, `forSession`, …). */
  readonly #builder: SessionBuilder;
  #status = new SessionStatus(async () => {
    const history = await this.getHistory();
    const prompt = this.context.getConfigs().length > 0 ? await this.context.previewSystemPrompt() : "";
    return estimateMessageTokens(history) + estimateTokens(prompt);
  });
  #hasCompaction = false;
  /** `forSession` named the session (until then it is the default session, `""`). */
  #named = false;
  /** Appends under way: a compaction they start is automatic (`compactAfter`), not a `compact()` call. */
  #appending = 0;
  /** What the compaction function threw during a `compact()` call (agents resolves `null` then). */
  #compactionFailure: { error: unknown } | undefined;
  #onUnload: UnloadCallback | undefined;
  #restored = false;
  /** A custom `tokenCounter` was given: agents' estimate then reads every block, even under a stored prompt. */
  #countsTokens = false;

  /**
   * agents' `new Session(sessionProvider, { context: [configs], promptStore, tokenCounter, onCompactionError })`,
   * or contextblocks' `new Session({ store })`, `new Session({ backend })` or `new Session(builder)`.
   */
  constructor(storeOrOptions: AgentsSessionSource, options?: AgentsSessionOptions) {
    const { builder, compaction, threshold } = builderOf(storeOrOptions, options);
    super(builder);
    this.#builder = builder;
    // The compaction function is registered after construction: `onCompaction` (overridden here) wraps it.
    if (compaction !== undefined) this.onCompaction(compaction);
    this.#status.threshold = threshold;
    this.#countsTokens = options?.tokenCounter !== undefined;
    if (isBroadcaster(storeOrOptions)) this.#status.broadcaster = storeOrOptions;
  }

  /**
   * agents' builder: an Agent (`this`), `ctx.storage`, a better-sqlite3 `Database`, a `SessionProvider`, or a
   * backend. Created from an Agent, the session sends agents' status frames (`cf_agent_session`) to its clients.
   */
  static create(source: SessionSource): Session {
    const session = new Session(new SessionBuilder(backendOf(source, "Session.create")));
    if (isBroadcaster(source)) session._broadcaster = source;
    return session;
  }

  /**
   * Names the session: its messages, and the keys of its blocks and prompt (`memory_chat-1`). As agents, `""`
   * is the default session (keys `memory`, `_system_prompt`), the one a session never named uses.
   */
  forSession(sessionId: string): this {
    if (sessionId === "" && !this.#named) return this;
    this.#builder.forSession(sessionId);
    this.#named = true;
    return this;
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

  withTracer(tracer: ContextTracer): this {
    this.#builder.withTracer(tracer);
    return this;
  }

  onCompactionError(handler: CompactionErrorHandler): this {
    this.#builder.onCompactionError(handler);
    return this;
  }

  /** agents' private field for where status frames go (set from the Agent by `Session.create(this)`). */
  get _broadcaster(): Broadcaster | undefined {
    return this.#status.broadcaster;
  }
  set _broadcaster(broadcaster: Broadcaster | undefined) {
    this.#status.broadcaster = broadcaster;
  }

  compactAfter(threshold: number, options?: CompactAfterOptions): this {
    this.#builder.compactAfter(threshold, options);
    this.#status.threshold = threshold;
    if (options?.tokenCounter !== undefined) this.#countsTokens = true;
    return this;
  }

  /**
   * agents' hook for hosts that mirror stored messages (its Think framework): the listener hears every
   * append, update, delete, clear and compaction of this session.
   */
  internal_onMessagesChanged(listener: MessageChangeListener | null): this {
    this.#status.listener = listener ?? undefined;
    return this;
  }

  /** agents' maintenance rewrite: stores the message and tells the listener, without a status frame. */
  async internal_rewriteMessage(message: SessionMessage): Promise<void> {
    await super.updateMessage(message);
    await this.#status.notify({ type: "update", message });
  }

  /**
   * Stores a message, as contextblocks' `Session` does; as agents, appending an id the session already holds
   * is a no-op that keeps the stored message (contextblocks' own `Session` refuses it unless it is an
   * identical retry).
   */
  override async appendMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<void> {
    const listening = this.#status.listener !== undefined;
    let existed =
      listening && typeof message?.id === "string" && (await this.getMessage(message.id)) !== null;
    this.#appending++;
    try {
      await super.appendMessage(message, parentId, options);
    } catch (error) {
      // As agents: appending an id the session holds is a no-op (the stored message is kept).
      if (!(await isHeldAlready(this.store, message, error))) throw error;
      existed = true;
    } finally {
      this.#appending--;
    }
    await this.#status.send("idle");
    if (listening) await this.#status.notify({ type: "append", message, parentId, inserted: !existed });
  }

  /** contextblocks' `appendMessages` (one turn's messages); a compaction it starts is automatic. */
  override async appendMessages(
    messages: readonly SessionMessage[],
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<void> {
    this.#appending++;
    try {
      await super.appendMessages(messages, parentId, options);
    } finally {
      this.#appending--;
    }
  }

  override async updateMessage(message: SessionMessage): Promise<void> {
    await super.updateMessage(message);
    await this.#status.send("idle");
    await this.#status.notify({ type: "update", message });
  }

  override async deleteMessages(messageIds: readonly string[]): Promise<void> {
    await super.deleteMessages(messageIds);
    await this.#status.send("idle");
    await this.#status.notify({ type: "delete", messageIds: [...messageIds] });
  }

  /**
   * Deletes every message and overlay and forgets loaded skills; as agents, the system prompt is then
   * re-rendered from the blocks and stored (a block written since the freeze shows from the next turn).
   */
  override async clearMessages(): Promise<void> {
    await super.clearMessages();
    await this.context.refreshSystemPrompt();
    await this.#status.send("idle");
    await this.#status.notify({ type: "clear" });
  }

  /**
   * As agents: a result whose `toMessageId` is not on the path is dropped, and a compaction extends the
   * earliest overlay visible on the path (its `fromMessageId` is kept), so summaries do not stack.
   */
  onCompaction(compaction: CompactFunction): this {
    this.#builder.onCompaction(async (history, context) => {
      let result: CompactResult | null;
      try {
        result = await compaction(history, context);
      } catch (error) {
        // An automatic compaction's failure goes on to `onCompactionError`; a `compact()` call resolves `null`.
        if (this.#appending > 0) throw error;
        this.#compactionFailure = { error };
        return null;
      }
      if (result === null) return null;
      const ids = new Set(history.map((message) => message.id));
      if (!ids.has(result.toMessageId)) return null;
      const visible = (await this.getCompactions()).filter(
        (overlay) =>
          ids.has(`${compactionPrefix}${overlay.id}`) ||
          (ids.has(overlay.fromMessageId) && ids.has(overlay.toMessageId)),
      );
      const first = visible[0];
      return first === undefined ? result : { ...result, fromMessageId: first.fromMessageId };
    });
    this.#hasCompaction = true;
    return this;
  }

  /**
   * As agents: throws when no compaction function is registered, and resolves `null` when it found nothing
   * to compact or the compaction function threw (its error goes to the clients as a `cf_agent_session_error`
   * frame); contextblocks' `Session` resolves `{ compacted: false, reason, message }` or throws.
   */
  override async compact(leafId?: string | null): Promise<(CompactResult & { compacted: true }) | null> {
    if (!this.#hasCompaction) throw new ContextError("UNSUPPORTED", NO_COMPACTION_MESSAGE);
    if (this.#status.broadcaster === undefined && this.#status.threshold !== undefined) {
      await this.#readAsEstimate();
    }
    const tokensBefore = await this.#status.send("compacting");
    let outcome: CompactOutcome | null;
    this.#compactionFailure = undefined;
    try {
      outcome = await super.compact(agentsLeafId(leafId));
    } catch (error) {
      this.#status.error(error);
      throw error;
    }
    // Set by the compaction function's wrapper while `super.compact` ran.
    const failure = this.#compactionFailure as { error: unknown } | undefined;
    this.#compactionFailure = undefined;
    if (failure !== undefined) {
      this.#status.error(failure.error);
      return null;
    }
    if (outcome === null || !outcome.compacted) {
      await this.#status.send("idle");
      return null;
    }
    await this.#status.send("idle", { compacted: { tokensBefore } });
    await this.#status.notify({ type: "compact" });
    return outcome;
  }

  /**
   * With `compactAfter`, agents' `compact()` estimates tokens even when nothing broadcasts, and its estimate
   * reads the prompt it would serve: the stored one, else the blocks (all of them with a custom
   * `tokenCounter`). Read the same, so `getContextBlock` answers afterwards as agents'; nothing is estimated.
   */
  async #readAsEstimate(): Promise<void> {
    if (this.#countsTokens) await readUnreadBlocks(this.context);
    else if (this.context.getConfigs().length > 0) await this.context.previewSystemPrompt();
  }

  /**
   * agents' private field for the compaction function, which code (agents' own tests among it) assigns
   * directly: assigning it registers the function as `onCompaction` does.
   */
  set _compactionFn(compaction: CompactFunction) {
    this.onCompaction(compaction);
  }

  /** agents' private field for the auto-compaction threshold: assigning it is `compactAfter(threshold)`. */
  set _tokenThreshold(threshold: number) {
    this.compactAfter(threshold);
  }

  /**
   * As agents: without a budgeted read in the store, the whole path is returned and `totalContentBytes` is
   * the sum of each message's JSON length.
   */
  override async getRecentHistory(maxBytes: number, minMessages = 1): Promise<RecentHistoryResult> {
    const result = await super.getRecentHistory(maxBytes, minMessages);
    if (this.store.getRecentHistory !== undefined) return result;
    const bytes = result.messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
    return { ...result, totalContentBytes: bytes };
  }

  /**
   * AI SDK tools (`set_context`, `search_context`, `load_context`, `unload_context`, `edit_context`) whose
   * results are text. As agents, the first call reads the blocks not read yet, so `getContextBlock` answers
   * after a cold start (where `freezeSystemPrompt` served the stored prompt without reading them).
   */
  async tools(): Promise<ToolSet> {
    if (!this.#restored) await this.#restoreLoadedSkills();
    await readUnreadBlocks(this.context);
    // As agents: the stored result of the unloaded skill is replaced by agents' marker (tokens reclaimed).
    return agentsTools(this.context, async (label, key) => {
      await unloadSkill(this, label, key, { placeholder: agentsUnloadedMarker });
      this.#onUnload?.(label, key);
    });
  }

  /**
   * The block as last read: blocks are read by `tools()`, a freeze that renders, a block write, `addContext`
   * or `context.load()` (a cold-start freeze serves the stored prompt without reading them, as agents').
   */
  getContextBlock(label: string): AgentsContextBlock | null {
    const block = this.context.getBlock(label);
    return block === null ? null : withSkillFlag(block);
  }

  getContextBlocks(): AgentsContextBlock[] {
    return this.context.getBlocks().map(withSkillFlag);
  }

  /** As agents: a write, refused or not, first reads the blocks not read yet, so `getContextBlock` answers. */
  async replaceContextBlock(label: string, content: string): Promise<AgentsContextBlock> {
    await readUnreadBlocks(this.context);
    return withSkillFlag(await this.context.setBlock(label, content));
  }

  async appendContextBlock(label: string, content: string): Promise<AgentsContextBlock> {
    await readUnreadBlocks(this.context);
    const text = agentsAppendText(this.context, label, content);
    return withSkillFlag(await this.context.appendToBlock(label, text));
  }

  /**
   * Adds a block at run time (stored by the backend without a provider). As agents: a skill block restores
   * the skills the transcript shows loaded in it.
   */
  async addContext(label: string, options: SessionContextOptions = {}): Promise<AgentsContextBlock> {
    await readUnreadBlocks(this.context);
    const block = withSkillFlag(await this.context.addBlock({ ...options, label }));
    if (block.isSkill) await this.#restoreLoadedSkills([block.label]);
    return block;
  }

  removeContext(label: string): boolean {
    return this.context.removeBlock(label);
  }

  freezeSystemPrompt(): Promise<string> {
    return this.context.freezeSystemPrompt();
  }

  refreshSystemPrompt(): Promise<string> {
    return this.context.refreshSystemPrompt();
  }

  getMessage(id: string): Promise<SessionMessage | null> {
    return this.store.getMessage(id);
  }

  getLatestLeaf(): Promise<SessionMessage | null> {
    return this.store.getLatestLeaf();
  }

  getBranches(messageId: string): Promise<SessionMessage[]> {
    return this.store.getBranches(messageId);
  }

  getPathLength(leafId?: string | null): Promise<number> {
    return this.store.getPathLength(agentsLeafId(leafId));
  }

  /** As agents: leaf id `""` reads the latest leaf (contextblocks' `Session` refuses an empty id). */
  override getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    return super.getHistory(agentsLeafId(leafId));
  }

  /**
   * agents restores loaded skills from the transcript when a session starts; here it happens on the first
   * `tools()` and on `addContext` of a skill block, so `unload_context` finds what an earlier instance loaded.
   */
  async #restoreLoadedSkills(labels?: readonly string[]): Promise<void> {
    this.#restored = labels === undefined ? true : this.#restored;
    const skillLabels = this.context
      .getConfigs()
      .filter(
        (config) => config.kind === "loadable" && (labels === undefined || labels.includes(config.label)),
      )
      .map((config) => config.label);
    if (skillLabels.length === 0) return;
    for (const entry of await this.#loadedSkillKeysBounded()) {
      const split = entry.indexOf(":");
      const label = entry.slice(0, split);
      if (skillLabels.includes(label)) this.context.restoreLoadedEntry(label, entry.slice(split + 1));
    }
  }

  /** Called with (label, key) after the `unload_context` tool unloaded an entry. */
  setUnloadCallback(callback: UnloadCallback | null): void {
    this.#onUnload = callback ?? undefined;
  }

  /** Forgets which skills are loaded (the transcript still holds the loads; `getLoadedSkillKeys` reads it). */
  clearSkillState(): void {
    this.#restored = true;
    const context = this.context;
    for (const entry of context.loadedEntries()) context.unloadEntry(entry.label, entry.key);
  }

  /**
   * Unloads a loaded skill: its `load_context` results in the transcript are replaced by agents' marker,
   * `[skill unloaded: <key>]`, which agents reads as unloaded too.
   */
  unloadSkill(label: string, key: string): Promise<boolean> {
    return unloadSkill(this, label, key, { placeholder: agentsUnloadedMarker });
  }

  /**
   * The skills loaded and not unloaded, as `label:key`: those the transcript shows and, as agents, those
   * `load_context` loaded in this instance whose result is not stored yet.
   */
  async getLoadedSkillKeys(): Promise<Set<string>> {
    const keys = await loadedKeysOf(await this.getHistory());
    for (const entry of this.context.loadedEntries()) keys.add(`${entry.label}:${entry.key}`);
    return keys;
  }

  /**
   * The row sizes of the path (`{ id, role, bytes }`, oldest first) when the store reports them, as agents'
   * `SessionProvider.getHistoryRowStats` does; `null` ("unsupported") otherwise, as contextblocks' own stores
   * (they bound wake reads with `getRecentHistory`), which agents' callers handle.
   */
  async getHistoryRowStats(): Promise<HistoryRowStat[] | null> {
    const stats = await (this.store as RowStatsStore).getHistoryRowStats?.();
    return Array.isArray(stats) ? stats : null;
  }

  /**
   * The skills the transcript has loaded, as `label:key`. With row stats (agents' bounded read), only the
   * assistant rows are read, one by one, never the whole path at once; otherwise the path is read whole.
   */
  async #loadedSkillKeysBounded(): Promise<Set<string>> {
    const stats = await this.getHistoryRowStats();
    if (stats === null) return loadedKeysOf(await this.getHistory());
    const assistant: SessionMessage[] = [];
    for (const row of stats) {
      if (row.role !== "assistant") continue;
      const message = await this.store.getMessage(row.id);
      if (message !== null) assistant.push(message);
    }
    return loadedKeysOf(assistant);
  }
}

/**
 * agents' text for the `load_context` result of an unloaded skill, `[skill unloaded: <key>]`: agents reads a
 * result that starts with `[skill unloaded:` as unloaded when it restores loaded skills.
 */
function agentsUnloadedMarker(entry: LoadedEntry): string {
  return `[skill unloaded: ${entry.key}]`;
}

/**
 * The skills `messages` have loaded and not unloaded, as `label:key`. A result replaced by agents' marker is
 * unloaded, and so is one replaced by the marker this entry wrote in 0.1.0 (`[unloaded: <key> from <label>]`,
 * `@contextblocks/ai`'s): a skill is loaded only when both readings say so.
 */
async function loadedKeysOf(messages: readonly SessionMessage[]): Promise<Set<string>> {
  // `loadedSkillKeys` reads the transcript through `getHistory` only.
  const transcript = { getHistory: async () => messages } as unknown as BaseSession;
  const agents = await loadedSkillKeys(transcript, { placeholder: agentsUnloadedMarker });
  const earlier = await loadedSkillKeys(transcript);
  return new Set([...agents].filter((key) => earlier.has(key)));
}

/** Reads every block when some were not read yet (a warm session reads nothing). */
export async function readUnreadBlocks(context: CoreContextBlocks): Promise<void> {
  if (context.getBlocks().length < context.getConfigs().length) await context.load();
}

/** One row of agents' `getHistoryRowStats`: a message's id, role and stored size. */
export interface HistoryRowStat {
  id: string;
  role: string;
  bytes: number;
}

type RowStatsStore = SessionStore & {
  getHistoryRowStats?: () => HistoryRowStat[] | null | Promise<HistoryRowStat[] | null>;
};

/** agents' `SessionOptions` (block configurations and a prompt store), or contextblocks' options. */
export type AgentsSessionOptions = Omit<SessionOptions, "store" | "context"> & {
  context?: readonly ContextConfig[] | ContextBlocks | undefined;
  promptStore?: WritableContextProvider | undefined;
};

/** What `new Session(…)` takes: agents' `SessionProvider`, or contextblocks' options, backend or builder. */
type AgentsSessionSource =
  | SessionStore
  | SessionStoreV1
  | SessionOptions
  | { backend: SessionBackend }
  | SessionBuilder;

/** A block as agents reports it: core's block plus `isSkill` (agents' name for loadable). */
export type AgentsContextBlock = ContextBlock & { isSkill: boolean };

function withSkillFlag(block: ContextBlock): AgentsContextBlock {
  return { ...block, isSkill: block.isSkill };
}

/**
 * The builder of a session constructed agents' way or contextblocks' way, and the compaction settings the
 * session registers itself (agents wraps the compaction function).
 */
function builderOf(
  storeOrOptions: AgentsSessionSource,
  options: AgentsSessionOptions | undefined,
): { builder: SessionBuilder; compaction: CompactFunction | undefined; threshold: number | undefined } {
  if (storeOrOptions instanceof SessionBuilder) {
    return { builder: storeOrOptions, compaction: undefined, threshold: undefined };
  }
  if (typeof storeOrOptions === "object" && storeOrOptions !== null && "backend" in storeOrOptions) {
    return {
      builder: new SessionBuilder(storeOrOptions.backend),
      compaction: undefined,
      threshold: undefined,
    };
  }
  const given: SessionOptions =
    typeof storeOrOptions === "object" && storeOrOptions !== null && "store" in storeOrOptions
      ? storeOrOptions
      : {
          // agents' SessionProvider has no session id (one provider is one session): name it "default".
          sessionId: (storeOrOptions as Partial<SessionStore>).sessionId ?? "default",
          ...fromAgentsOptions(options),
          store: storeOrOptions as SessionStore,
        };
  const { compaction, ...rest } = given;
  return { builder: new SessionBuilder(rest), compaction, threshold: rest.threshold };
}

function fromAgentsOptions(options: AgentsSessionOptions | undefined): Omit<SessionOptions, "store"> {
  if (options === undefined) return {};
  const { context, promptStore, ...rest } = options;
  if (context instanceof CoreContextBlocks) return { ...rest, context };
  if (context === undefined && promptStore === undefined) return rest;
  return { ...rest, context: new ContextBlocks([...(context ?? [])], promptStore) };
}
