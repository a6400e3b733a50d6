import {
  ContextBlocks,
  type ContextConfig,
  ContextError,
  type ContextTracer,
  type WhenChanged,
  type WritableContextProvider,
} from "@contextblocks/core";
import {
  type AnyContextProvider,
  describeValue,
  isSearchProvider,
  isSkillProvider,
  isWritableProvider,
} from "@contextblocks/core/store-kit";
import type {
  CompactAfterOptions,
  CompactFunction,
  CompactionErrorHandler,
  SessionTokenCounter,
} from "./compaction/types.js";
import { MessageTree } from "./message-tree.js";
import type { RunStateStore } from "./run-state.js";
// A cycle read only at call time (`build()`), never while the modules load.
import { Session } from "./session.js";
import { isSessionBackend, type SessionBackend } from "./session-backend.js";
import { isSessionStore, type SessionStore } from "./session-store.js";
import { isSessionStoreV1, type SessionStoreV1 } from "./session-store-v1.js";

/** `withContext(label, options)`: a block config without its label. */
export type SessionContextOptions = Omit<ContextConfig, "label">;

/** The collaborators of `new SessionBuilder(options)` (and `new Session(options)`): given, not built. */
export interface SessionOptions {
  /**
   * Where the messages live: a store on the storage contract `SessionStoreV1` (`SqliteSessionStore`,
   * `InMemorySessionStore`, your own), which the session reads through its message tree, or a `SessionStore`
   * that applies the rules itself (`PostgresSessionStore`).
   */
  store: SessionStore | SessionStoreV1;
  /** The session's blocks and frozen prompt. Default: a `ContextBlocks` with no blocks. */
  context?: ContextBlocks | undefined;
  /** Where pipeline plugin state persists, per session (read by `contextPipeline({ session })`). */
  runState?: RunStateStore | undefined;
  /** The session's id. Default: `store.sessionId`. */
  sessionId?: string | undefined;
  /** The compaction function (`createCompactFunction` from `@contextblocks/sessions/compaction`). */
  compaction?: CompactFunction | undefined;
  /** Compacts automatically after an append when the estimate passes this many tokens. */
  threshold?: number | undefined;
  /** Counts tokens for automatic compaction. */
  tokenCounter?: SessionTokenCounter | undefined;
  /** Hears automatic compaction failures (default: `console.warn`). */
  onCompactionError?: CompactionErrorHandler | undefined;
  /** Where the session reports spans. Default: the tracer registered with `setContextTracer`, if any. */
  tracer?: ContextTracer | undefined;
}

/** What a session works with once resolved. */
export interface SessionCollaborators {
  store: SessionStore;
  context: ContextBlocks;
  runState: RunStateStore | undefined;
}

/** The settings a builder collects, read by the sessions it builds. */
export interface SessionSettings {
  contexts: ContextConfig[];
  /** `true`: the backend's prompt storage for the session; a provider: that one. */
  cachedPrompt?: true | WritableContextProvider | undefined;
  compaction?: CompactFunction | undefined;
  threshold?: number | undefined;
  tokenCounter?: SessionTokenCounter | undefined;
  onCompactionError?: CompactionErrorHandler | undefined;
  /** Where the session (and the `ContextBlocks` it builds) reports spans. */
  tracer?: ContextTracer | undefined;
  /** Awaited after each message write (a `SessionManager` touches its registry's `updated_at`). */
  afterWrite?: ((sessionId: string) => Promise<void>) | undefined;
}

/** A builder's state: not on the class, so only this package's `Session` and `SessionManager` read it. */
interface BuilderState {
  backend: SessionBackend | null;
  given: SessionCollaborators | null;
  sessionId: string;
  settings: SessionSettings;
  /** A session resolved its collaborators from this builder: what builds them can no longer change. */
  inUse: boolean;
}

const states = new WeakMap<SessionBuilder, BuilderState>();

/**
 * The one builder of sessions: block declarations, the cached prompt, compaction and tracing, collected
 * before first use. `build()` gives a `Session`; a `SessionManager` given the builder builds each of its
 * sessions from it.
 *
 * ```ts
 * const builder = new SessionBuilder(sqliteBackend(ctx.storage))
 *   .withContext("soul", { provider: { get: async () => "You are helpful." } })
 *   .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
 *   .withCachedPrompt();
 * const session = builder.forSession("chat-1").build();
 * const manager = new SessionManager(builder);
 * ```
 *
 * Given collaborators instead of a backend (`new SessionBuilder({ store, context })`), only the compaction
 * and id settings apply: the blocks are the given `ContextBlocks`.
 */
export class SessionBuilder {
  constructor(source: SessionBackend | SessionOptions) {
    states.set(this, isSessionBackend(source) ? backendState(source) : givenState(source));
  }

  /** The backend sessions are built from (`null`: the builder was given its collaborators). */
  get backend(): SessionBackend | null {
    return stateOf(this).backend;
  }

  /** Keeps the session's messages, blocks and prompt apart from other sessions in the same database. */
  forSession(sessionId: string): this {
    const state = beforeUse(this, "forSession");
    if (typeof sessionId !== "string" || sessionId.length === 0) {
      throw new ContextError(
        "INVALID_CONFIG",
        `forSession: the session id must be a non-empty string, got ${describeValue(sessionId)}`,
      );
    }
    state.sessionId = sessionId;
    return this;
  }

  /**
   * Adds a block; without a `provider` it is stored by the backend, kept apart per session. Unless
   * `whenChanged` is given, a block the model writes whole (`set_context`: the backend's blocks, any provider
   * with `set` and neither `load` nor `search`) reminds: a write reaches the model in the next turn after the
   * cached prefix. Every other block waits for a refresh (core's default).
   */
  withContext(label: string, options: SessionContextOptions = {}): this {
    beforeUse(this, "withContext").settings.contexts.push({ ...options, label });
    return this;
  }

  /** Persists the frozen prompt (in the backend unless a provider is given) so it survives a restart. */
  withCachedPrompt(provider?: WritableContextProvider): this {
    beforeUse(this, "withCachedPrompt").settings.cachedPrompt = provider ?? true;
    return this;
  }

  /** Where the sessions and their blocks report spans (`otelTracer()` from `@contextblocks/otel`). */
  withTracer(tracer: ContextTracer): this {
    beforeUse(this, "withTracer").settings.tracer = tracer;
    return this;
  }

  /** The compaction function (`createCompactFunction` from `@contextblocks/sessions/compaction`). */
  onCompaction(compaction: CompactFunction): this {
    stateOf(this).settings.compaction = checkCompaction(compaction);
    return this;
  }

  /**
   * Compacts automatically after an append when the estimate passes `threshold` tokens. Without a
   * `tokenCounter`, the estimate (stored parts plus the frozen prompt, core's `estimateTokens`) is calibrated
   * by the input tokens the model reports (`reportUsage`, which `contextPipeline({ session })` calls after
   * each model call): a tool-heavy history a chars/4 estimate undercounts still compacts. A test model that
   * reports constant usage (10 tokens a call) calibrates the estimate down to it, and compaction never
   * fires: test with `scriptedModel` of `@contextblocks/ai/test`, whose usage grows with the prompt.
   */
  compactAfter(threshold: number, options: CompactAfterOptions = {}): this {
    const { settings } = stateOf(this);
    settings.threshold = checkThreshold(threshold);
    if (options.tokenCounter !== undefined) settings.tokenCounter = options.tokenCounter;
    return this;
  }

  /** Hears automatic compaction failures (default: `console.warn`). */
  onCompactionError(handler: CompactionErrorHandler): this {
    stateOf(this).settings.onCompactionError = handler;
    return this;
  }

  /**
   * A `Session` with these settings, read nothing until first use. Later calls on the builder do not change
   * it (each `build()` takes a copy).
   */
  build(): Session {
    return new Session(copyBuilder(this));
  }
}

/** The builder's state (this package's `Session` and `SessionManager` read it). */
export function stateOf(builder: SessionBuilder): BuilderState {
  const state = states.get(builder);
  if (state === undefined) {
    throw new ContextError(
      "INVALID_CONFIG",
      `expected a SessionBuilder (new SessionBuilder(backend)), got ${describeValue(builder)}`,
    );
  }
  return state;
}

/** An independent builder with the same backend, id and settings (block configs copied). */
export function copyBuilder(builder: SessionBuilder): SessionBuilder {
  const state = stateOf(builder);
  const copy = Object.create(SessionBuilder.prototype) as SessionBuilder;
  states.set(copy, {
    ...state,
    settings: { ...state.settings, contexts: state.settings.contexts.map((config) => ({ ...config })) },
    inUse: false,
  });
  return copy;
}

/** The collaborators of the builder's session, built on first use from the backend (or as given). */
export function resolveCollaborators(builder: SessionBuilder): SessionCollaborators {
  const state = stateOf(builder);
  state.inUse = true;
  if (state.given !== null) return state.given;
  const backend = state.backend as SessionBackend;
  const { sessionId, settings } = state;
  const cached = settings.cachedPrompt;
  const promptStorage = cached === true ? backend.prompt(sessionId) : (cached ?? null);
  // Providers the backend made while choosing defaults, handed to `ContextBlocks` instead of new ones.
  const made = new Map<string, AnyContextProvider>();
  const blockOf = (label: string) => {
    let provider = made.get(label);
    if (provider === undefined) {
      provider = backend.block(label, sessionId);
      made.set(label, provider);
    }
    return provider;
  };
  const configs = settings.contexts.map((config) =>
    config.whenChanged !== undefined
      ? config
      : { ...config, whenChanged: defaultWhenChanged(config.provider ?? blockOf(config.label)) },
  );
  const context = new ContextBlocks(
    configs,
    promptStorage,
    blockOf,
    settings.tracer !== undefined ? { tracer: settings.tracer } : {},
  );
  return { store: messageTreeOf(backend.messages(sessionId)), context, runState: backend.runState };
}

/**
 * A block the model writes whole (`set_context`) reminds by default: what it wrote in one turn reaches it in
 * the next as a reminder after the cached prefix, and the frozen prompt stays byte-identical until a refresh.
 * Other blocks wait, as core's default: a read-only block's rendering (an empty one is skipped) and a keyed
 * block's summary (a count, a list) are not what the model needs to see again. Cost: each turn re-reads the
 * reminding blocks (one row each on SQL backends).
 */
function defaultWhenChanged(provider: unknown): WhenChanged {
  const writesWhole =
    isWritableProvider(provider) && !isSearchProvider(provider) && !isSkillProvider(provider);
  return writesWhole ? "remind" : "wait";
}

/** The state of a builder whose backend and blocks may still change. */
function beforeUse(builder: SessionBuilder, method: string): BuilderState {
  const state = stateOf(builder);
  if (state.given !== null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${method}: this session was given its collaborators; builder methods need a backend (new SessionBuilder(backend))`,
    );
  }
  if (state.inUse) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${method}: the session is already in use; builder methods go before the first call (use session.context.addBlock at run time)`,
    );
  }
  return state;
}

function backendState(backend: SessionBackend): BuilderState {
  return { backend, given: null, sessionId: "", settings: { contexts: [] }, inUse: false };
}

function givenState(options: SessionOptions): BuilderState {
  if (typeof options !== "object" || options === null || !("store" in options)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `new SessionBuilder / new Session: expected a SessionBackend (sqliteBackend(…), postgresBackend(…), inMemoryBackend()) or the collaborators { store, context?, runState? }, got ${describeValue(options)}`,
    );
  }
  if (!isSessionStore(options.store) && !isSessionStoreV1(options.store)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `new Session: store must be a SessionStore, got ${describeValue(options.store)} (new SessionBuilder(backend) builds a session from a backend)`,
    );
  }
  if (options.context !== undefined && !(options.context instanceof ContextBlocks)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `new Session: context must be a ContextBlocks, got ${describeValue(options.context)}`,
    );
  }
  const sessionId = options.sessionId ?? options.store.sessionId;
  if (typeof sessionId !== "string") {
    throw new ContextError(
      "INVALID_CONFIG",
      `new Session: the session id must be a string, got ${describeValue(sessionId)}`,
    );
  }
  const settings: SessionSettings = {
    contexts: [],
    compaction: options.compaction === undefined ? undefined : checkCompaction(options.compaction),
    threshold: options.threshold === undefined ? undefined : checkThreshold(options.threshold),
    tokenCounter: options.tokenCounter,
    onCompactionError: options.onCompactionError,
    tracer: options.tracer,
  };
  const given: SessionCollaborators = {
    store: messageTreeOf(options.store),
    context: options.context ?? new ContextBlocks([]),
    runState: options.runState,
  };
  return { backend: null, given, sessionId, settings, inUse: false };
}

/** The store a session reads: a storage-contract store through its message tree, any other as it is. */
function messageTreeOf(store: SessionStore | SessionStoreV1): SessionStore {
  return isSessionStoreV1(store) ? new MessageTree(store) : store;
}

function checkCompaction(compaction: CompactFunction): CompactFunction {
  if (typeof compaction !== "function") {
    throw new ContextError(
      "INVALID_CONFIG",
      `onCompaction: expected a function, got ${describeValue(compaction)}`,
    );
  }
  return compaction;
}

function checkThreshold(threshold: number): number {
  if (typeof threshold !== "number" || !Number.isFinite(threshold) || threshold <= 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `compactAfter: the threshold must be a positive number, got ${String(threshold)}`,
    );
  }
  return threshold;
}
