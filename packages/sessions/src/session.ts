import {
  type ContextBlocks,
  ContextError,
  type ContextEvent,
  type ContextTracer,
  type TraceAttributes,
} from "@contextblocks/core";
import { describeValue, GEN_AI, getContextTracer, traced } from "@contextblocks/core/store-kit";
import { clientRewrite } from "./client-rewrite.js";
import type { CompactOutcome, CompactResult } from "./compaction/types.js";
import {
  type HistoryBatchOptions,
  type HistoryOptions,
  type HistoryResult,
  readHistory,
  readHistoryBatches,
} from "./history-read.js";
import { importTime } from "./import-time.js";
import {
  type AppendOptions,
  checkMessageId,
  checkSessionMessage,
  type SessionMessage,
  untrustedMessage,
} from "./message.js";
import { estimateMessageTokens } from "./message-tokens.js";
import { MessageTree } from "./message-tree.js";
import type { RunStateStore } from "./run-state.js";
import {
  resolveCollaborators,
  SessionBuilder,
  type SessionCollaborators,
  type SessionOptions,
  type SessionSettings,
  stateOf,
} from "./session-builder.js";
import type {
  AppendedMessage,
  RecentHistoryResult,
  SearchResult,
  SessionStore,
  StoredCompaction,
} from "./session-store.js";

/** A compaction stored its overlay: the messages `fromMessageId..toMessageId` now read as `summary`. */
export interface CompactedEvent {
  type: "compacted";
  /** The session compacted. */
  sessionId: string;
  fromMessageId: string;
  toMessageId: string;
  summary: string;
  /** Messages the overlay covers. */
  messages: number;
  /** Estimated tokens of the path's history before the overlay, and as the model reads it after. */
  tokensBefore: number;
  tokensAfter: number;
}

/**
 * A message was stored (`appendMessage`, `appendMessages`, `upsertMessage` of a new id, `importMessage`):
 * emitted after the store write succeeded, with the parent it was stored under, so a host can mirror it.
 */
export interface MessageAppendedEvent {
  type: "message-appended";
  sessionId: string;
  messageId: string;
  /** The parent the store put it under (`null`: a root). */
  parentId: string | null;
  role: string;
  /** The message as stored (client-written messages after `untrustedMessage`). */
  message: SessionMessage;
  /** The row's stored time where the store reports it (`getNode`), else `null`. */
  createdAt: string | null;
  /** True for `importMessage`: written elsewhere, stored with its own id, parent and time. */
  imported: boolean;
}

/** A stored message's content was replaced (`updateMessage`, `upsertMessage` of a stored id); its parent stays. */
export interface MessageUpdatedEvent {
  type: "message-updated";
  sessionId: string;
  messageId: string;
  role: string;
  message: SessionMessage;
}

/** `deleteMessages` succeeded: the ids asked (ids the session did not hold were no-ops in the store). */
export interface MessagesDeletedEvent {
  type: "messages-deleted";
  sessionId: string;
  messageIds: string[];
}

/** `clearMessages` deleted every message and overlay of the session. */
export interface MessagesClearedEvent {
  type: "messages-cleared";
  sessionId: string;
}

/** An overlay was stored (`addCompaction`, or `compact`, which also emits `compacted`). */
export interface CompactionAddedEvent {
  type: "compaction-added";
  sessionId: string;
  compaction: StoredCompaction;
}

/**
 * The change feed of a session's messages, as the `subscribe()` feed of Cloudflare agents' Sessions API: one
 * event per successful store write, never for a write that failed. Replaying it in order onto another store
 * (`appendMessage(message, parentId)`, `updateMessage`, `deleteMessages`, `clearMessages`, `addCompaction`)
 * reproduces the tree and its overlays.
 */
export type SessionMessageEvent =
  | MessageAppendedEvent
  | MessageUpdatedEvent
  | MessagesDeletedEvent
  | MessagesClearedEvent
  | CompactionAddedEvent;

const messageEventTypes: ReadonlySet<string> = new Set([
  "message-appended",
  "message-updated",
  "messages-deleted",
  "messages-cleared",
  "compaction-added",
]);

/** True for an event of the message change feed (a listener that mirrors messages, or one that skips them). */
export function isSessionMessageEvent(event: { type: string }): event is SessionMessageEvent {
  return messageEventTypes.has(event?.type);
}

/**
 * `reportUsage` was called: what the provider counted for one model call on this session, with its prompt
 * cache figures where the provider reports them (what the cache saved: `cacheReadTokens` were billed at the
 * cached rate).
 */
export interface UsageReportedEvent {
  type: "usage-reported";
  sessionId: string;
  inputTokens: number;
  /** Input tokens read from the provider's prompt cache; `null` when the provider did not say. */
  cacheReadTokens: number | null;
  /** Input tokens written to the provider's prompt cache; `null` when the provider did not say. */
  cacheWriteTokens: number | null;
}

/**
 * What `Session.subscribe` listeners hear: the message change feed, compactions, usage reports, and the
 * events of the session's `ContextBlocks`.
 */
export type SessionEvent = SessionMessageEvent | CompactedEvent | UsageReportedEvent | ContextEvent;

/** `upsertMessage(message, options)`: where a new id goes, and who wrote it. */
export interface UpsertOptions extends AppendOptions {
  /** The parent of a new message (omitted: the latest leaf; `null`: a new root). A stored one keeps its own. */
  parentId?: string | null | undefined;
}

/** `importMessage(message, parentId, options)`. */
export interface ImportOptions {
  /** When the message was written (a `Date`, ISO text or epoch milliseconds): kept as its stored time. */
  createdAt: Date | string | number;
}

/** A session listener; what it throws is caught and never fails the operation that caused the event. */
export type SessionListener = (event: SessionEvent) => void;

/**
 * A conversation: messages as a tree in a `SessionStore`, their compaction, and search. Its blocks and
 * frozen prompt are `session.context` (core's `ContextBlocks`). It is given its collaborators
 * (`new Session({ store, context })`) or built from a backend by a `SessionBuilder`:
 *
 * ```ts
 * const session = new SessionBuilder(sqliteBackend(ctx.storage))
 *   .forSession("chat-1")
 *   .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
 *   .withCachedPrompt()
 *   .build();
 * await session.context.setBlock("memory", "User prefers metric units.");
 * ```
 *
 * The AI SDK parts live in `@contextblocks/ai`: `contextTools(session.context)`, `unloadSkill(session, …)`,
 * `SessionHistoryPlugin`, `contextPipeline({ model, session })`.
 */
export class Session {
  /** Where the session's settings and collaborators come from (given ones, or a backend's). */
  readonly #builder: SessionBuilder;
  #resolved: SessionCollaborators | null = null;
  readonly #listeners = new Set<SessionListener>();
  /** Running token estimate of the active path for the default counter (no history read per append). */
  #pathTokens: number | null = null;
  /**
   * Provider-reported tokens over the estimate of the same prompt, from the last `reportUsage`: the default
   * counter's estimate is multiplied by it (`null`: no report yet, the estimate as is; `undefined`: not
   * read yet from a store that keeps it, `getTokenCalibration`).
   */
  #calibration: number | null | undefined = undefined;
  /** Compactions under way, by the leaf asked for (`null`: the latest leaf): `compact` joins a running one. */
  readonly #compactions = new Map<string | null, Promise<CompactOutcome>>();

  /**
   * A session on the collaborators it is given (`{ store, context?, runState? }`), or on a builder
   * (`SessionBuilder.build()` gives one; a subclass may pass its own builder and keep configuring it until
   * first use). Nothing is read until first use.
   */
  constructor(options: SessionOptions);
  constructor(builder: SessionBuilder);
  constructor(options: SessionOptions | SessionBuilder) {
    this.#builder = options instanceof SessionBuilder ? options : new SessionBuilder(options);
    // A builder given a foreign object fails here, not on first use.
    stateOf(this.#builder);
  }

  get #settings(): SessionSettings {
    return stateOf(this.#builder).settings;
  }

  // ── Collaborators ───────────────────────────────────────────────────────────────────────────────────

  /** The session's id (`""`: the default session of a store). */
  get id(): string {
    return stateOf(this.#builder).sessionId;
  }

  /** The session's blocks and frozen prompt: built once, on first use. Feed it to `contextTools` and pipelines. */
  get context(): ContextBlocks {
    return this.#use().context;
  }

  /** Where the messages live. */
  get store(): SessionStore {
    return this.#use().store;
  }

  /** Where pipeline plugin state persists, when the session has one. */
  get runState(): RunStateStore | undefined {
    return this.#use().runState;
  }

  /**
   * Hears the message change feed (`message-appended`, `message-updated`, `messages-deleted`,
   * `messages-cleared`, `compaction-added`, each after the store write succeeded), `compacted` (after an
   * overlay was stored), `prompt-refreshed` and `block-written` (from the session's `ContextBlocks`). Listeners run after the operation succeeded; what they throw is caught.
   * Returns the function that unsubscribes.
   */
  subscribe(listener: SessionListener): () => void {
    if (typeof listener !== "function") {
      throw new ContextError(
        "INVALID_INPUT",
        `subscribe: expected a function, got ${describeValue(listener)}`,
      );
    }
    const wrapped: SessionListener = (event) => listener(event);
    this.#listeners.add(wrapped);
    return () => {
      this.#listeners.delete(wrapped);
    };
  }

  // ── Messages ────────────────────────────────────────────────────────────────────────────────────────

  getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    return this.#trace(
      "contextblocks.session.history",
      () => ({}),
      async (span) => {
        const messages = await this.#use().store.getHistory(leafId);
        span?.setAttributes({ [GEN_AI.recordCount]: messages.length });
        return messages;
      },
    );
  }

  /**
   * The path root..leaf (default: the active one) in batches of at most `batchSize` messages and
   * `maxBatchBytes` serialized bytes, overlays applied as `getHistory` applies them, read from the store one
   * batch at a time (peak memory is one batch; breaking out of the loop leaves the rest unread). With
   * `maxBytes`, the read stops before the first message that would pass the budget; the generator's return
   * value says `{ truncated, bytes }`. As `historyBatches()` of Cloudflare agents' Sessions API.
   */
  historyBatches(
    options: HistoryBatchOptions = {},
  ): AsyncGenerator<SessionMessage[], { truncated: boolean; bytes: number }, undefined> {
    return readHistoryBatches(this.#use().store, options);
  }

  /**
   * The path root..leaf read in bounded batches, stopping before the first message that would pass
   * `maxBytes` (then `truncated: true`: the oldest messages that fit, never a silent cut).
   */
  history(options: HistoryOptions = {}): Promise<HistoryResult> {
    return this.#trace(
      "contextblocks.session.history",
      () => ({}),
      async (span) => {
        const result = await readHistory(this.#use().store, options);
        span?.setAttributes({ [GEN_AI.recordCount]: result.messages.length });
        return result;
      },
    );
  }

  /**
   * The newest messages of the active path whose stored size fits `maxBytes` (and at least `minMessages`):
   * a wake reads a bounded window. Stores without it fall back to the whole path.
   */
  async getRecentHistory(maxBytes: number, minMessages = 1): Promise<RecentHistoryResult> {
    const { store } = this.#use();
    if (store.getRecentHistory) return store.getRecentHistory(null, maxBytes, minMessages);
    const messages = await store.getHistory();
    return { messages, truncated: false, totalContentBytes: JSON.stringify(messages).length };
  }

  /**
   * Stores a message under `parentId` (omitted: the latest leaf; `null`: a new root). Then, past the
   * `compactAfter` threshold, compacts; a failed compaction goes to `onCompactionError` and never fails
   * the append (the message is stored).
   */
  appendMessage(
    message: SessionMessage,
    parentId?: string | null,
    options: AppendOptions = {},
  ): Promise<void> {
    return this.#trace(
      "create_memory",
      () => ({
        [GEN_AI.operation]: "create_memory",
        [GEN_AI.storeId]: MESSAGES_STORE_ID,
        [GEN_AI.recordId]: typeof message?.id === "string" ? message.id : undefined,
        [GEN_AI.recordCount]: 1,
      }),
      async () => {
        await this.#store(
          trusted(checkSessionMessage(message, "appendMessage"), options, "appendMessage"),
          parentId,
        );
        await this.#afterWrite();
        await this.#compactIfOverThreshold();
      },
    );
  }

  /**
   * Stores messages in order (the first under `parentId` as `appendMessage` does, each next one under the
   * one before), then checks the `compactAfter` threshold once, after all of them. While the last one
   * still waits for tool results (a tool part in state `input-available`: the model's turn goes on with
   * another call), the check waits for the end of the turn, so a compaction never lands in the middle of
   * a tool loop. `contextPipeline({ model, session })` stores each model call this way.
   */
  appendMessages(
    messages: readonly SessionMessage[],
    parentId?: string | null,
    options: AppendOptions = {},
  ): Promise<void> {
    return this.#trace(
      "create_memory",
      () => ({
        [GEN_AI.operation]: "create_memory",
        [GEN_AI.storeId]: MESSAGES_STORE_ID,
        [GEN_AI.recordCount]: Array.isArray(messages) ? messages.length : undefined,
      }),
      async () => {
        if (!Array.isArray(messages)) {
          throw new ContextError(
            "INVALID_INPUT",
            `appendMessages: expected an array of messages, got ${describeValue(messages)}`,
          );
        }
        // `Array.from` visits a sparse array's holes (as `undefined`, refused), which `map` would skip.
        const checked = Array.from(messages, (message: unknown) =>
          trusted(checkSessionMessage(message, "appendMessages"), options, "appendMessages"),
        );
        const { store } = this.#use();
        if (store instanceof MessageTree) await this.#storeChain(store, checked, parentId);
        else {
          let parent = parentId;
          for (const message of checked) {
            await this.#store(message, parent);
            if (parent !== undefined) parent = message.id;
          }
        }
        await this.#afterWrite();
        const last = checked.at(-1);
        if (last !== undefined && !awaitsToolResults(last)) await this.#compactIfOverThreshold();
      },
    );
  }

  async #store(message: SessionMessage, parentId: string | null | undefined): Promise<void> {
    const { store } = this.#use();
    const appended = await store.appendMessage(message, parentId);
    if (this.#pathTokens !== null) {
      this.#pathTokens = parentId === undefined ? this.#pathTokens + estimateMessageTokens([message]) : null;
    }
    if (this.#listeners.size === 0) return;
    // The parent the store chose (the latest leaf when omitted): reported by the append where the store
    // does (every store of this project), else one node read, only with a listener.
    const placed = isAppendedMessage(appended) ? appended : await store.getNode(message.id);
    this.#emit({
      type: "message-appended",
      sessionId: this.id,
      messageId: message.id,
      parentId: placed?.parentId ?? parentId ?? null,
      role: message.role,
      message,
      createdAt: placed?.createdAt ?? null,
      imported: false,
    });
  }

  /** A turn stored whole or not at all (one store append), then one event per message. */
  async #storeChain(
    tree: MessageTree,
    messages: readonly SessionMessage[],
    parentId: string | null | undefined,
  ): Promise<void> {
    if (messages.length === 0) return;
    const placed = await tree.appendChain(messages, parentId, { operation: "appendMessages" });
    if (this.#pathTokens !== null) {
      this.#pathTokens = parentId === undefined ? this.#pathTokens + estimateMessageTokens(messages) : null;
    }
    let parent = placed.parentId;
    for (const message of messages) {
      this.#emit({
        type: "message-appended",
        sessionId: this.id,
        messageId: message.id,
        parentId: parent,
        role: message.role,
        message,
        createdAt: placed.createdAt,
        imported: false,
      });
      parent = message.id;
    }
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    await this.#update(checkSessionMessage(message, "updateMessage"));
  }

  async #update(message: SessionMessage): Promise<void> {
    await this.#use().store.updateMessage(message);
    this.#pathTokens = null;
    this.#emit({
      type: "message-updated",
      sessionId: this.id,
      messageId: message.id,
      role: message.role,
      message,
    });
    await this.#afterWrite();
  }

  /**
   * Replaces the content of the stored message with this id, or appends it when the id is new (under
   * `options.parentId`, default the latest leaf). A stored message keeps its parent: `parentId` only places
   * a new one. `{ source: "client" }` applies `untrustedMessage` either way, and a client's rewrite of a
   * stored message never changes its role nor anything the server wrote in it: in a message that is not the
   * client's own (`user`) it only supplies outcomes of tool calls still waiting for one, as `useChat`'s
   * `addToolResult` does (`clientRewrite`). `inserted` says which it did.
   * Two upserts of one new id at once store it once (the second becomes an update).
   */
  upsertMessage(message: SessionMessage, options: UpsertOptions = {}): Promise<{ inserted: boolean }> {
    return this.#trace(
      "create_memory",
      () => ({
        [GEN_AI.operation]: "create_memory",
        [GEN_AI.storeId]: MESSAGES_STORE_ID,
        [GEN_AI.recordId]: typeof message?.id === "string" ? message.id : undefined,
        [GEN_AI.recordCount]: 1,
      }),
      async () => {
        const checked = trusted(checkSessionMessage(message, "upsertMessage"), options, "upsertMessage");
        const { store } = this.#use();
        // A client's rewrite of a stored message keeps what the server wrote (`clientRewrite`).
        const rewrite = (stored: SessionMessage) =>
          options.source === "client" ? clientRewrite(stored, checked, "upsertMessage") : checked;
        const stored = await store.getMessage(checked.id);
        if (stored !== null) {
          await this.#update(rewrite(stored));
          return { inserted: false };
        }
        try {
          await this.#store(checked, options.parentId);
        } catch (error) {
          // Stored meanwhile by another writer: update it instead (its parent stays).
          const meanwhile = await store.getMessage(checked.id);
          if (meanwhile === null) throw error;
          await this.#update(rewrite(meanwhile));
          return { inserted: false };
        }
        await this.#afterWrite();
        await this.#compactIfOverThreshold();
        return { inserted: true };
      },
    );
  }

  /**
   * Stores a message as it was written elsewhere (a migration, another Durable Object, a mirrored feed):
   * its id, under the explicit `parentId` (`null`: a root), with `createdAt` as its time (set on the
   * message, and as the row's time where the store has `importMessage`). Server-side only: there is no
   * client source (`{ source: "client" }` is refused) and the store's refusals hold: an id already stored,
   * a parent not in the session, and an id that is still the parent of stored messages (a parent cycle).
   * Emits `message-appended` with `imported: true`; never compacts.
   */
  async importMessage(
    message: SessionMessage,
    parentId: string | null,
    options: ImportOptions & { source?: unknown },
  ): Promise<void> {
    const checked = checkSessionMessage(message, "importMessage");
    if (parentId !== null) checkMessageId(parentId, "parentId", "importMessage");
    if (typeof options !== "object" || options === null) {
      throw new ContextError(
        "INVALID_INPUT",
        `importMessage: expected options { createdAt }, got ${describeValue(options)}`,
      );
    }
    if (options.source !== undefined && options.source !== "server") {
      throw new ContextError(
        "INVALID_INPUT",
        `importMessage: server-side only; a client-written message goes through appendMessage(message, parentId, { source: "client" }) (got source ${describeValue(options.source)})`,
      );
    }
    const createdAt = importTime(options.createdAt, "importMessage");
    const stored: SessionMessage = { ...checked, createdAt };
    const { store } = this.#use();
    if (typeof store.importMessage === "function") await store.importMessage(stored, parentId, createdAt);
    else await store.appendMessage(stored, parentId);
    this.#pathTokens = null;
    this.#emit({
      type: "message-appended",
      sessionId: this.id,
      messageId: stored.id,
      parentId,
      role: stored.role,
      message: stored,
      createdAt,
      imported: true,
    });
    await this.#afterWrite();
  }

  async deleteMessages(messageIds: readonly string[]): Promise<void> {
    await this.#use().store.deleteMessages(messageIds);
    this.#pathTokens = null;
    this.#emit({
      type: "messages-deleted",
      sessionId: this.id,
      messageIds: [...new Set(messageIds.filter((id): id is string => typeof id === "string"))],
    });
    await this.#afterWrite();
  }

  /** Deletes every message and overlay, and forgets loaded skills. */
  async clearMessages(): Promise<void> {
    const { store, context } = this.#use();
    await store.clearMessages();
    for (const entry of context.loadedEntries()) context.unloadEntry(entry.label, entry.key);
    this.#pathTokens = null;
    // The store forgot the session's calibration with its messages.
    this.#calibration = undefined;
    this.#emit({ type: "messages-cleared", sessionId: this.id });
    await this.#afterWrite();
  }

  // ── Compaction ──────────────────────────────────────────────────────────────────────────────────────

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
  ): Promise<StoredCompaction> {
    this.#pathTokens = null;
    const compaction = await this.#use().store.addCompaction(summary, fromMessageId, toMessageId);
    this.#emit({ type: "compaction-added", sessionId: this.id, compaction: { ...compaction } });
    return compaction;
  }

  getCompactions(): Promise<StoredCompaction[]> {
    return this.#use().store.getCompactions();
  }

  /**
   * Runs the compaction function on the path to `leafId` (default: the latest leaf) and stores its overlay,
   * emits `compacted`, then refreshes the frozen prompt (the one deliberate cache bust: the history prefix
   * changed anyway), so what was written to memory since reaches the next prompt. Resolves what it did:
   * `{ compacted: true, fromMessageId, toMessageId, summary }`, or `{ compacted: false, reason, message }`
   * when there is no compaction function or it found nothing to compact. (`null` only from a subclass that
   * keeps Cloudflare agents' contract, `Session` of `@contextblocks/agents`; this class never resolves it.)
   */
  compact(leafId?: string | null): Promise<CompactOutcome | null> {
    const compaction = this.#settings.compaction;
    if (compaction === undefined) {
      return Promise.resolve({
        compacted: false,
        reason: "no-compaction-function",
        message: "compact: no compaction function is registered (onCompaction(createCompactFunction(…)))",
      });
    }
    // One compaction at a time per leaf: a call made while one runs (another `compact()`, or the threshold
    // check of a concurrent append) waits for it and shares its outcome, so the model summarizes a range once.
    const key = leafId ?? null;
    const joins = key === null || typeof key === "string";
    const running = joins ? this.#compactions.get(key) : undefined;
    if (running !== undefined) return running;
    const started = this.#trace(
      "contextblocks.compaction",
      () => ({}),
      async (span): Promise<CompactOutcome> => {
        const { store, context } = this.#use();
        const history = await store.getHistory(leafId);
        const result = await compaction(history, { tokenCounter: this.#settings.tokenCounter });
        span?.setAttributes({ "contextblocks.compaction.compacted": result !== null });
        if (result === null) {
          return {
            compacted: false,
            reason: "nothing-to-compact",
            message: `compact: the compaction function returned null for a path of ${history.length} messages (${estimateMessageTokens(history)} estimated tokens); createCompactFunction does when nothing lies between the protected head (protectHead messages) and the kept tail (tailTokenBudget tokens, at least minTailMessages), or when the summary is empty`,
          };
        }
        const overlay = await store.addCompaction(result.summary, result.fromMessageId, result.toMessageId);
        this.#pathTokens = null;
        this.#emit({ type: "compaction-added", sessionId: this.id, compaction: { ...overlay } });
        if (span !== undefined || this.#listeners.size > 0) {
          const event = compactedEvent(this.id, history, result);
          span?.setAttributes({
            [GEN_AI.recordCount]: event.messages,
            "contextblocks.compaction.from_message_id": event.fromMessageId,
            "contextblocks.compaction.to_message_id": event.toMessageId,
            "contextblocks.compaction.tokens_before": event.tokensBefore,
            "contextblocks.compaction.tokens_after": event.tokensAfter,
          });
          this.#emit(event);
        }
        if (context.getConfigs().length > 0) await context.refreshSystemPrompt();
        return { ...result, compacted: true };
      },
    );
    if (!joins) return started;
    this.#compactions.set(key, started);
    const done = () => {
      if (this.#compactions.get(key) === started) this.#compactions.delete(key);
    };
    started.then(done, done);
    return started;
  }

  /**
   * What the provider counted for a model call that carried this session's prompt and path
   * (`usage.inputTokens` of the AI SDK; `contextPipeline({ session })` reports it after every call). The
   * estimate `compactAfter` decides from is calibrated by it: a chars/4 estimate misses most of a
   * tool-heavy history (Cloudflare agents' issues #1538 and #1593: 30–40K estimated where the model reported
   * 140K, and compaction never ran), so from then on the estimate is scaled by reported ÷ estimated.
   * `pendingTokens`: the estimate of what the call sent that is not stored yet (the turn's new messages).
   * `cacheReadTokens` / `cacheWriteTokens`: the provider's prompt-cache figures for the call, passed on in the
   * `usage-reported` event (emitted for every valid report). A report of 0 tokens (a provider that does not
   * count) calibrates nothing. With a `tokenCounter` the counter decides, as before.
   */
  async reportUsage(usage: {
    inputTokens: number;
    pendingTokens?: number | undefined;
    cacheReadTokens?: number | undefined;
    cacheWriteTokens?: number | undefined;
  }): Promise<void> {
    const inputTokens = usage?.inputTokens;
    const pendingTokens = usage?.pendingTokens ?? 0;
    for (const [name, value] of [
      ["inputTokens", inputTokens],
      ["pendingTokens", pendingTokens],
      ["cacheReadTokens", usage?.cacheReadTokens ?? 0],
      ["cacheWriteTokens", usage?.cacheWriteTokens ?? 0],
    ] as const) {
      if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
        throw new ContextError(
          "INVALID_INPUT",
          `reportUsage: ${name} must be a finite number ≥ 0, got ${describeValue(value)}`,
        );
      }
    }
    this.#emit({
      type: "usage-reported",
      sessionId: this.id,
      inputTokens,
      cacheReadTokens: usage.cacheReadTokens ?? null,
      cacheWriteTokens: usage.cacheWriteTokens ?? null,
    });
    if (inputTokens === 0 || this.#settings.tokenCounter !== undefined) return;
    const estimated = (await this.#estimateTokens({ calibrated: false })) + pendingTokens;
    if (estimated <= 0) return;
    const calibration = inputTokens / estimated;
    this.#calibration = calibration;
    // Kept per session where the store can (one row), so a new Session per request starts calibrated.
    const { store } = this.#use();
    if (typeof store.setTokenCalibration === "function") await store.setTokenCalibration(calibration);
  }

  /** The estimate `compactAfter` compares with its threshold (calibrated by the last `reportUsage`). */
  estimateTokens(): Promise<number> {
    return this.#estimateTokens();
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
  async #estimateTokens(options: { calibrated?: boolean } = {}): Promise<number> {
    const { store, context } = this.#use();
    const configs = context.getConfigs();
    // A preview: an estimate must not freeze (and store) a prompt the model has not been sent yet.
    const systemPrompt = configs.length > 0 ? await context.previewSystemPrompt() : "";
    const counter = this.#settings.tokenCounter;
    if (counter !== undefined) {
      // A stored prompt is served without reading blocks; the counter is given them all the same.
      if (context.getBlocks().length < configs.length) await context.load();
      const messages = await store.getHistory();
      const counted = await counter({ messages, systemPrompt, contextBlocks: context.getBlocks() });
      // A counter's NaN or Infinity must not trigger (or block) compaction on every append: count it as 0.
      return Number.isFinite(counted) ? Math.max(0, Math.ceil(counted)) : 0;
    }
    // From the stamps the store keeps per message where it can (no content read), else the history.
    if (this.#pathTokens === null) {
      this.#pathTokens =
        typeof store.getPathTokens === "function"
          ? await store.getPathTokens()
          : estimateMessageTokens(await store.getHistory());
    }
    const estimate = this.#pathTokens + context.estimateTokens(systemPrompt);
    const calibration = options.calibrated === false ? null : await this.#storedCalibration(store);
    return calibration === null ? estimate : Math.ceil(estimate * calibration);
  }

  /** The calibration of the last `reportUsage`, read once from a store that keeps it. */
  async #storedCalibration(store: SessionStore): Promise<number | null> {
    if (this.#calibration === undefined) {
      const stored =
        typeof store.getTokenCalibration === "function" ? await store.getTokenCalibration() : null;
      // A stored value that is not a positive finite ratio (hand-edited) is ignored.
      this.#calibration = typeof stored === "number" && Number.isFinite(stored) && stored > 0 ? stored : null;
    }
    return this.#calibration;
  }

  // ── Search ──────────────────────────────────────────────────────────────────────────────────────────

  /** Full-text search over this session's message text. Throws `UNSUPPORTED` when the store cannot. */
  search(query: string, options: { limit?: number } = {}): Promise<SearchResult[]> {
    return this.#trace(
      "search_memory",
      () => ({
        [GEN_AI.operation]: "search_memory",
        [GEN_AI.storeId]: MESSAGES_STORE_ID,
        [GEN_AI.queryText]:
          this.#tracer()?.captureContent === true && typeof query === "string" ? query : undefined,
      }),
      async (span) => {
        const { store } = this.#use();
        if (typeof store.searchMessages !== "function") {
          throw new ContextError("UNSUPPORTED", "search: this session's store has no searchMessages method");
        }
        const results = await store.searchMessages(query, options.limit ?? 20);
        span?.setAttributes({ [GEN_AI.recordCount]: results.length });
        return results;
      },
    );
  }

  #use(): SessionCollaborators {
    if (this.#resolved === null) {
      this.#resolved = resolveCollaborators(this.#builder);
      this.#resolved.context.subscribe((event) => this.#emit(event));
    }
    return this.#resolved;
  }

  /** After a message write: what the builder asked for (a manager touches its registry). */
  async #afterWrite(): Promise<void> {
    const afterWrite = this.#settings.afterWrite;
    if (afterWrite !== undefined) await afterWrite(this.id);
  }

  /** The tracer in force: the session's own, else the registered one (through `traced`). */
  #tracer(): ContextTracer | undefined {
    return this.#settings.tracer ?? getContextTracer();
  }

  /** An operation in a span carrying the session's id as `gen_ai.conversation.id`. */
  #trace<T>(
    name: string,
    attributes: () => Record<string, string | number | boolean | undefined>,
    operation: (span: { setAttributes(attributes: TraceAttributes): void } | undefined) => Promise<T>,
  ): Promise<T> {
    return traced(
      this.#settings.tracer,
      name,
      () => ({ ...attributes(), [GEN_AI.conversationId]: this.id }),
      operation,
    );
  }

  #emit(event: SessionEvent): void {
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

/** `gen_ai.memory.store.id` of a session's messages (the session is `gen_ai.conversation.id`). */
const MESSAGES_STORE_ID = "session-messages";

/** The `compacted` event: the range, and the history's estimated tokens before and after the overlay. */
function compactedEvent(
  sessionId: string,
  history: readonly SessionMessage[],
  result: CompactResult,
): CompactedEvent {
  const from = history.findIndex((message) => message.id === result.fromMessageId);
  const to = history.findIndex((message) => message.id === result.toMessageId);
  const covered = from >= 0 && to >= from ? to - from + 1 : 0;
  const tokensBefore = estimateMessageTokens(history);
  const summary: SessionMessage = {
    id: "summary",
    role: "assistant",
    parts: [{ type: "text", text: result.summary }],
  };
  const tokensAfter =
    covered === 0
      ? tokensBefore
      : estimateMessageTokens([...history.slice(0, from), summary, ...history.slice(to + 1)]);
  return {
    type: "compacted",
    sessionId,
    fromMessageId: result.fromMessageId,
    toMessageId: result.toMessageId,
    summary: result.summary,
    messages: covered,
    tokensBefore,
    tokensAfter,
  };
}

function isAppendedMessage(value: unknown): value is AppendedMessage {
  if (typeof value !== "object" || value === null) return false;
  const parentId = (value as { parentId?: unknown }).parentId;
  return parentId === null || typeof parentId === "string";
}

/** `{ source: "client" }`: the message made safe (`untrustedMessage`); else as given. */
function trusted(message: SessionMessage, options: AppendOptions, operation: string): SessionMessage {
  return options?.source === "client" ? untrustedMessage(message, operation) : message;
}

/** A message with a tool call whose result has not come yet: the turn it belongs to is not over. */
function awaitsToolResults(message: SessionMessage): boolean {
  return message.parts.some(
    (part) => typeof part.toolCallId === "string" && part.state === "input-available",
  );
}
