import { BlockCache } from "./block-cache.js";
import { BlockIO, freshWrite } from "./block-io.js";
import { BlockQueue } from "./block-queue.js";
import { isVersionedProvider, isVersionedSkillProvider, isWritableProvider } from "./capabilities.js";
import type { ResolvedConfig } from "./config.js";
import { clipped, describeValue } from "./describe-value.js";
import type { DriftPolicy } from "./drift.js";
import { applyEdit } from "./edits.js";
import { LoadedEntries, type LoadedEntry } from "./entries.js";
import { ContextError } from "./errors.js";
import {
  type BlockWriteAction,
  type ContextEvent,
  type ContextListener,
  Listeners,
  type PromptFrozenEvent,
} from "./events.js";
import { FrozenPrompt, type StoredPrompt, SYSTEM_PROMPT_LABEL } from "./frozen-prompt.js";
import { checkedTokenCounter, checkMaxToolContentLength, checkTokenLimit, requireString } from "./limits.js";
import { renderPrompt, toOneLine } from "./prompt-format.js";
import { isPromiseLike, ProviderCalls, providerText } from "./provider-calls.js";
import { BlockRegistry } from "./registry.js";
import { changedLabels, renderReminder } from "./reminder.js";
import { estimateTokens, type TokenCounter } from "./tokens.js";
import { buildToolSpecs } from "./tools/build.js";
import type { ToolHost, WriteOptions } from "./tools/host.js";
import type { ContextToolSpec, ToolOptions } from "./tools/spec.js";
import {
  type ContextTracer,
  capturesContent,
  GEN_AI,
  sha256Hex,
  type TraceAttributes,
  type TraceSpan,
  traced,
  tracerInForce,
} from "./tracing.js";
import type {
  AnyContextProvider,
  BlockVersion,
  ContextBlock,
  ContextConfig,
  WritableContextProvider,
  WriteSource,
} from "./types.js";

/** How many versions `blockVersions` lists when no limit is given. */
export const DEFAULT_HISTORY_LIMIT = 50;

function sourceOf(options: WriteOptions, method: string): WriteSource {
  return options.source === undefined ? { kind: "api", name: method } : { ...options.source };
}

/** `value` when it is a positive integer (a version number or a limit), else `INVALID_INPUT` naming `field`. */
function checkPositive(label: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new ContextError(
      "INVALID_INPUT",
      `Block "${label}": ${field} must be a positive integer, got ${describeValue(value)}`,
      { label },
    );
  }
  return value;
}

/** No reserved labels: one empty set shared by every instance given none. */
const NO_LABELS: ReadonlySet<string> = new Set();

/** The default `onDrift`: a warning on the console. */
/** A keyed block's provider, whose `set` writes one entry. */
type KeyedProvider = Extract<ResolvedConfig, { kind: "searchable" | "loadable" }>["provider"];

/**
 * The `set` that writes entry `key` of a keyed block (`setEntry` and `editEntry` alike): an empty key is
 * `INVALID_INPUT`, a provider without `set` is `READONLY`.
 */
function entrySetter(label: string, provider: KeyedProvider, key: string): NonNullable<KeyedProvider["set"]> {
  if (key.length === 0)
    throw new ContextError("INVALID_INPUT", `Block "${label}": an entry key must not be empty`, { label });
  const set = provider.set;
  if (typeof set !== "function") {
    throw new ContextError("READONLY", `Block "${label}" is readonly: its provider has no set()`, { label });
  }
  return set;
}

function warnDrift(message: string): void {
  console.warn(`contextblocks: ${message}`);
}

/** Extras after the three constructor arguments (configs, prompt store, default provider). */
export interface ContextBlocksOptions extends ToolOptions {
  /** Counts tokens for usage and `maxTokens`. Default: `estimateTokens`, a heuristic (see its docs). */
  tokenCounter?: TokenCounter;
  /**
   * What a cold start does when the stored prompt was rendered from a different block configuration
   * (a block added, removed, renamed, or its description, limit or kind changed). Default `"rerender"`:
   * the first `freezeSystemPrompt()` renders once from the providers and stores the result. `"keep"`:
   * serve the stored prompt until `refreshSystemPrompt()`. Either way `onDrift` hears about it.
   */
  drift?: DriftPolicy;
  /** Called with the reason when drift is detected. Default: `console.warn`. */
  onDrift?: (reason: string) => void;
  /**
   * Milliseconds a provider call may take before it fails with `PROVIDER_TIMEOUT`. Default: no limit.
   * The block's queue then moves on; the late answer is ignored (a late write may still land).
   */
  providerTimeoutMs?: number;
  /** Labels no block may take (for example the label the prompt store is kept under). */
  reservedLabels?: readonly string[];
  /**
   * Where this instance reports spans (`otelTracer()` from `@contextblocks/otel`). Default: the tracer
   * registered with `setContextTracer`, if any; with none, nothing is traced.
   */
  tracer?: ContextTracer;
}

/**
 * An agent's system prompt assembled from labelled blocks, each backed by a provider. The prompt is frozen
 * so the model provider's prefix cache stays warm; changes reach the model through `reminder()` or the one
 * deliberate rebuild, `refreshSystemPrompt()`. A facade over its parts: the block registry, the block
 * cache, the per-block queue and I/O, the provider calls, the loaded entries and the frozen prompt.
 */
export class ContextBlocks {
  readonly #registry: BlockRegistry;
  readonly #calls: ProviderCalls;
  readonly #frozen: FrozenPrompt;
  readonly #options: ContextBlocksOptions;
  readonly #countTokens: TokenCounter;
  #freezing: Promise<string> | undefined;
  /**
   * The parts a wake does not use (the block cache, the block I/O with its queue, the loaded entries, the
   * listeners), made on first use: a wake that serves its stored prompt makes only the registry, the
   * provider calls and the frozen prompt. Each object it makes is one more shape a full collection can
   * take with its optimized code (see docs/wake-cost.md, "A seventh look").
   */
  #cacheMade: BlockCache | undefined;
  #ioMade: BlockIO | undefined;
  #loadedMade: LoadedEntries | undefined;
  #listenersMade: Listeners<ContextEvent> | undefined;

  /**
   * @param configs The blocks, in prompt order.
   * @param promptStore Persists the frozen prompt so a cold start returns the very string the model cached.
   * @param defaultProvider Storage for blocks declared without a provider, by label.
   * @param options Token counter, drift policy, provider timeout, tool limits.
   */
  constructor(
    configs: readonly ContextConfig[],
    promptStore?: WritableContextProvider | null,
    defaultProvider?: ((label: string) => AnyContextProvider) | null,
    options: ContextBlocksOptions = {},
  ) {
    if (!Array.isArray(configs)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `ContextBlocks expects an array of block configs, got ${describeValue(configs)}`,
      );
    }
    if (promptStore != null && !isWritableProvider(promptStore)) {
      throw new ContextError("INVALID_CONFIG", "The prompt store must be a writable provider (get and set)");
    }
    const timeout = options.providerTimeoutMs;
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `providerTimeoutMs must be a positive number, got ${describeValue(timeout)}`,
      );
    }
    checkMaxToolContentLength(options.maxToolContentLength);
    this.#options = options;
    this.#countTokens =
      options.tokenCounter == null ? estimateTokens : checkedTokenCounter(options.tokenCounter);
    const reserved = options.reservedLabels;
    this.#registry = new BlockRegistry(
      defaultProvider ?? undefined,
      reserved === undefined || reserved.length === 0 ? NO_LABELS : new Set(reserved),
    );
    this.#calls = new ProviderCalls(timeout);
    this.#frozen = new FrozenPrompt(
      promptStore ?? undefined,
      this.#calls,
      options.drift ?? "rerender",
      options.onDrift ?? warnDrift,
    );
    this.#registry.addAll(configs);
  }

  get #cache(): BlockCache {
    this.#cacheMade ??= new BlockCache(this.#countTokens);
    return this.#cacheMade;
  }

  get #io(): BlockIO {
    this.#ioMade ??= new BlockIO(
      this.#registry,
      this.#cache,
      new BlockQueue(),
      this.#calls,
      this.#countTokens,
    );
    return this.#ioMade;
  }

  get #loaded(): LoadedEntries {
    this.#loadedMade ??= new LoadedEntries();
    return this.#loadedMade;
  }

  get #listeners(): Listeners<ContextEvent> {
    this.#listenersMade ??= new Listeners<ContextEvent>();
    return this.#listenersMade;
  }

  /** How many listeners are subscribed, without making the listener set. */
  get #listenerCount(): number {
    return this.#listenersMade?.size ?? 0;
  }

  // ── Blocks ────────────────────────────────────────────────────────────────────────────────────────────

  /** Reads every block from its provider. Other entry points load lazily, one block at a time. */
  async load(): Promise<void> {
    await Promise.all(this.#registry.all().map((config) => this.#io.readQueued(config)));
  }

  /** Adds a block at the end. Its provider is read now; the frozen prompt is unchanged until a refresh. */
  async addBlock(config: ContextConfig): Promise<ContextBlock> {
    const resolved = this.#registry.add(config);
    try {
      return { ...(await this.#io.readQueued(resolved)) };
    } catch (error) {
      this.removeBlock(resolved.label);
      throw error;
    }
  }

  /** Removes a block. The frozen prompt is unchanged until a refresh. False when there was none. */
  removeBlock(label: string): boolean {
    if (!this.#registry.remove(label)) return false;
    this.#cache.forget(label);
    this.#loaded.removeBlock(label);
    return true;
  }

  /** The block as last read, or `null` when it is unknown or not read yet (`load()` reads all). */
  getBlock(label: string): ContextBlock | null {
    const block = this.#cache.get(label);
    return block ? { ...block } : null;
  }

  /** The blocks read so far, in declaration order. */
  getBlocks(): ContextBlock[] {
    return this.#registry.all().flatMap((config) => {
      const block = this.#cache.get(config.label);
      return block ? [{ ...block }] : [];
    });
  }

  /** The configuration in force, with default providers filled in. */
  getConfigs(): readonly ResolvedConfig[] {
    return [...this.#registry.all()];
  }

  /** Counts tokens with the configured counter. */
  estimateTokens(text: string): number {
    return this.#countTokens(text);
  }

  // ── Writes ────────────────────────────────────────────────────────────────────────────────────────────

  /** Replaces a writable block's content in its provider. The frozen prompt is unchanged. */
  setBlock(label: string, content: string, options: WriteOptions = {}): Promise<ContextBlock> {
    return this.#traceWrite("update_memory", label, { content }, async () => {
      const config = this.#registry.requireWritable(label);
      requireString(label, "content", content);
      const source = sourceOf(options, "setBlock");
      const block = await this.#io.write(config, async () => content, { source }, false);
      this.#written(label, "set", source);
      return block;
    });
  }

  /** Appends to a writable block, with a newline between old and new text when neither has one. */
  appendToBlock(label: string, content: string, options: WriteOptions = {}): Promise<ContextBlock> {
    return this.#traceWrite("update_memory", label, { content }, async () => {
      const config = this.#registry.requireWritable(label);
      requireString(label, "content", content);
      const source = sourceOf(options, "appendToBlock");
      const block = await this.#io.write(
        config,
        async (current) => {
          const before = await current();
          const separator =
            before.length > 0 && !before.endsWith("\n") && !content.startsWith("\n") ? "\n" : "";
          return before + separator + content;
        },
        { source },
      );
      this.#written(label, "append", source);
      return block;
    });
  }

  /**
   * Replaces the one occurrence of `oldStr` in a writable block's current text with `newStr` (empty:
   * deletes it). `NO_MATCH` when it does not occur, `MULTIPLE_MATCHES` with the count when it occurs more
   * than once. The edit applies to the stored text: with a provider that has `setIf`, a block another agent
   * changed meanwhile is edited as it is now, or the edit fails when `oldStr` is gone. `maxTokens` holds.
   */
  editBlock(
    label: string,
    oldStr: string,
    newStr: string,
    options: WriteOptions = {},
  ): Promise<ContextBlock> {
    return this.#traceWrite("update_memory", label, { content: newStr }, async () => {
      const config = this.#registry.requireWritable(label);
      requireString(label, "old_str", oldStr);
      requireString(label, "new_str", newStr);
      const source = sourceOf(options, "editBlock");
      const block = await this.#io.write(
        config,
        async (current) => applyEdit(label, await current(), oldStr, newStr),
        { source },
      );
      this.#written(label, "edit", source);
      return block;
    });
  }

  /**
   * The versions a writable block's provider keeps (the `versions` capability), newest first, at most
   * `limit` (default 50). `UNSUPPORTED` when its provider keeps none.
   */
  async blockVersions(label: string, options: { limit?: number } = {}): Promise<BlockVersion[]> {
    const { provider } = this.#requireHistory(label);
    const limit = checkPositive(label, "limit", options.limit ?? DEFAULT_HISTORY_LIMIT);
    const versions = await this.#calls.run(label, provider, () => provider.versions({ limit }));
    return versions.slice(0, limit).map((version) => ({ ...version, source: { ...version.source } }));
  }

  /**
   * Writes the content of an earlier `version` again, as a new version (versions are never rewritten).
   * `NOT_FOUND` when the provider no longer keeps that version; `maxTokens` holds.
   */
  async restoreBlock(label: string, version: number): Promise<ContextBlock> {
    const { config, provider } = this.#requireHistory(label);
    checkPositive(label, "version", version);
    const found = (await this.#calls.run(label, provider, () => provider.versions({ version }))).find(
      (candidate) => candidate.version === version,
    );
    if (found === undefined) {
      throw new ContextError(
        "NOT_FOUND",
        `Block "${label}" has no version ${version} (it never existed or is past the retention of its versions)`,
        { label },
      );
    }
    const source: WriteSource = { kind: "api", name: "restoreBlock", restoredFrom: version };
    return this.#traceWrite("update_memory", label, { content: found.content }, async () => {
      const block = await this.#io.write(config, async () => found.content, { source }, false);
      this.#written(label, "restore", source);
      return block;
    });
  }

  /**
   * Adds or replaces one keyed entry of a searchable or loadable block (`description` is kept by loadable
   * providers; it is listed on one line, so line breaks and control characters in it become spaces).
   * `maxTokens` applies to each entry: its content and description together.
   */
  setEntry(
    label: string,
    key: string,
    content: string,
    description?: string,
    options: WriteOptions = {},
  ): Promise<ContextBlock> {
    return this.#writeEntry(label, key, content, description, sourceOf(options, "setEntry"));
  }

  #writeEntry(
    label: string,
    key: string,
    content: string,
    description: string | undefined,
    source: WriteSource,
  ): Promise<ContextBlock> {
    return this.#traceWrite("upsert_memory", label, { key, content, keyFrom: source.kind }, () =>
      this.#writeEntryNow(label, key, content, description, source),
    );
  }

  async #writeEntryNow(
    label: string,
    key: string,
    content: string,
    description: string | undefined,
    source: WriteSource,
  ): Promise<ContextBlock> {
    const config = this.#registry.requireKeyed(label);
    requireString(label, "key", key);
    requireString(label, "content", content);
    const set = entrySetter(label, config.provider, key);
    if (description !== undefined) requireString(label, "description", description);
    const provider = config.provider;
    const listed = description === undefined ? undefined : toOneLine(description);
    checkTokenLimit(config, this.#countTokens, "entry", content, listed);
    // The source goes to every keyed provider: one that keeps entry versions stores it, others ignore it.
    const block = await this.#io.changeEntry(config, () =>
      set.call(provider, key, content, listed, freshWrite({ source })),
    );
    this.#written(label, "set-entry", source, key);
    return block;
  }

  /**
   * Replaces the one occurrence of `oldStr` in one entry of a keyed block whose provider can load entries
   * (a skill collection: `load(key)` and `set(key, …)`), keeping its description. The same rules as
   * `editBlock`: `NO_MATCH`, `MULTIPLE_MATCHES` with the count, `maxTokens` per entry; `NOT_FOUND` for an
   * unknown key, `UNSUPPORTED` for a keyed block whose provider cannot load an entry (a search provider).
   * Keyed providers have no conditional write: the entry is read and written again in the block's queue,
   * so edits made here in parallel each apply to the one before (another writer's change may be lost).
   */
  editEntry(
    label: string,
    key: string,
    oldStr: string,
    newStr: string,
    options: WriteOptions = {},
  ): Promise<ContextBlock> {
    const keyFrom = options.source?.kind ?? "api";
    return this.#traceWrite("upsert_memory", label, { key, content: newStr, keyFrom }, async () => {
      const config = this.#registry.requireKeyed(label);
      requireString(label, "key", key);
      requireString(label, "old_str", oldStr);
      requireString(label, "new_str", newStr);
      const provider = config.provider;
      if (!("load" in provider) || typeof provider.load !== "function") {
        throw new ContextError(
          "UNSUPPORTED",
          `Block "${label}" is ${config.kind}: its provider cannot load an entry to edit; replace the entry with set_context`,
          { label },
        );
      }
      const load = provider.load;
      const set = entrySetter(label, provider, key);
      const source = sourceOf(options, "editEntry");
      // Read, edit and write in the block's queue: the AI SDK runs a step's tool calls in parallel, and two
      // edits of one entry that both read it first would each write back the text without the other's edit.
      const block = await this.#io.changeEntry(config, async () => {
        const current = providerText(label, "load()", await load.call(provider, key));
        if (current === null) {
          throw new ContextError(
            "NOT_FOUND",
            `Block "${label}" has no entry "${clipped(key)}"; nothing was changed. Use a key the block lists.`,
            { label },
          );
        }
        const edited = applyEdit(label, current, oldStr, newStr, `${label} entry "${key}"`);
        checkTokenLimit(config, this.#countTokens, "entry", edited);
        // No description: the provider keeps the entry's own.
        await set.call(provider, key, edited, undefined, freshWrite({ source }));
      });
      this.#written(label, "set-entry", source, key);
      return block;
    });
  }

  /** Removes one keyed entry, when the provider can delete. A provider that keeps entry versions keeps them. */
  deleteEntry(label: string, key: string, options: WriteOptions = {}): Promise<ContextBlock> {
    return this.#traceWrite("delete_memory", label, { key }, () =>
      this.#deleteEntryNow(label, key, sourceOf(options, "deleteEntry")),
    );
  }

  /**
   * The versions a loadable block's provider keeps of entry `key` (entry versions, `versions({ key })`),
   * newest first, at most `limit` (default 50); a deleted entry's versions too. `UNSUPPORTED` when its
   * provider keeps none.
   */
  async entryVersions(label: string, key: string, options: { limit?: number } = {}): Promise<BlockVersion[]> {
    const { provider } = this.#requireEntryHistory(label, key);
    const limit = checkPositive(label, "limit", options.limit ?? DEFAULT_HISTORY_LIMIT);
    const versions = await this.#calls.run(label, provider, () => provider.versions({ key, limit }));
    return versions.slice(0, limit).map((version) => ({ ...version, source: { ...version.source } }));
  }

  /**
   * Writes the content of an earlier `version` of entry `key` again, as its new version (a deleted entry
   * comes back). `NOT_FOUND` when the provider no longer keeps that version; `maxTokens` holds.
   */
  async restoreEntry(label: string, key: string, version: number): Promise<ContextBlock> {
    const { provider } = this.#requireEntryHistory(label, key);
    checkPositive(label, "version", version);
    const found = (await this.#calls.run(label, provider, () => provider.versions({ key, version }))).find(
      (candidate) => candidate.version === version,
    );
    if (found === undefined) {
      throw new ContextError(
        "NOT_FOUND",
        `Block "${label}" has no version ${version} of entry "${key}" (it never existed or is past the retention of its versions)`,
        { label },
      );
    }
    return this.#writeEntry(label, key, found.content, undefined, {
      kind: "api",
      name: "restoreEntry",
      restoredFrom: version,
    });
  }

  async #deleteEntryNow(label: string, key: string, source: WriteSource): Promise<ContextBlock> {
    const config = this.#registry.requireKeyed(label);
    requireString(label, "key", key);
    const provider = config.provider;
    const remove = provider.delete;
    if (typeof remove !== "function") {
      throw new ContextError("UNSUPPORTED", `Block "${label}": its provider cannot delete entries`, {
        label,
      });
    }
    const block = await this.#io.changeEntry(config, async () => {
      await remove.call(provider, key);
      this.#loaded.remove({ label, key });
    });
    this.#written(label, "delete-entry", source, key);
    return block;
  }

  // ── Keyed reads ───────────────────────────────────────────────────────────────────────────────────────

  /** Ranked matches from a searchable block, or `null` when nothing matches. */
  search(label: string, query: string): Promise<string | null> {
    const queryText = () =>
      capturesContent(this.#options.tracer) && typeof query === "string" ? query : undefined;
    return this.#traceMemory(
      "search_memory",
      label,
      () => ({ [GEN_AI.queryText]: queryText() }),
      async (span) => {
        const config = this.#registry.require(label);
        if (config.kind !== "searchable") {
          throw new ContextError("UNSUPPORTED", `Block "${label}" is not searchable`, { label });
        }
        requireString(label, "query", query);
        const found = providerText(
          label,
          "search()",
          await this.#calls.run(label, config.provider, () => config.provider.search(query)),
        );
        // A searchable block answers with one text of ranked matches: one record, or none.
        span?.setAttributes({ [GEN_AI.recordCount]: found === null ? 0 : 1 });
        return found;
      },
    );
  }

  /** One entry of a loadable block in full, or `null` for an unknown key. Marks it loaded. */
  loadEntry(label: string, key: string): Promise<string | null> {
    return this.#readEntry(label, key, "api");
  }

  #readEntry(label: string, key: string, keyFrom: WriteSource["kind"]): Promise<string | null> {
    return this.#traceMemory(
      "search_memory",
      label,
      () => ({ [GEN_AI.recordId]: this.#traceableKey(key, keyFrom) }),
      async (span) => {
        const config = this.#registry.require(label);
        if (config.kind !== "loadable") {
          throw new ContextError("UNSUPPORTED", `Block "${label}" is not loadable`, { label });
        }
        requireString(label, "key", key);
        const content = providerText(
          label,
          "load()",
          await this.#calls.run(label, config.provider, () => config.provider.load(key)),
        );
        if (content !== null) this.#loaded.add({ label, key });
        span?.setAttributes({ [GEN_AI.recordCount]: content === null ? 0 : 1 });
        return content;
      },
    );
  }

  /**
   * Marks an entry loaded without reading it: for a host restoring, after a restart, what its transcript
   * shows was loaded (so `unload_context` finds it). False when the block is not loadable or not known.
   */
  restoreLoadedEntry(label: string, key: string): boolean {
    if (typeof key !== "string" || this.#registry.find(label)?.kind !== "loadable") return false;
    this.#loaded.add({ label, key });
    return true;
  }

  /** Marks an entry unloaded. False when it was not loaded in this instance. */
  unloadEntry(label: string, key: string): boolean {
    return this.#loaded.remove({ label, key });
  }

  /** Entries loaded in this instance and not unloaded since. */
  loadedEntries(): LoadedEntry[] {
    return this.#loaded.list();
  }

  // ── The frozen prompt ─────────────────────────────────────────────────────────────────────────────────

  /**
   * The frozen system prompt: rendered once, then the identical string on every call. With a prompt store,
   * a cold start returns the stored string without reading any block, unless it drifted from the
   * configuration and the policy is `"rerender"`: then this call (the only one that may) renders the prompt
   * again and stores it. A warm call reads nothing.
   */
  freezeSystemPrompt(): Promise<string> {
    const current = this.#frozen.current();
    if (current !== null) return Promise.resolve(current);
    if (this.#freezing === undefined) {
      const freezing = this.#freeze();
      // Adopted from a store that read synchronously: frozen already, nothing in flight.
      if (typeof freezing === "string") return Promise.resolve(freezing);
      this.#freezing = freezing;
      const clear = () => {
        if (this.#freezing === freezing) this.#freezing = undefined;
      };
      freezing.then(clear, clear);
    }
    return this.#freezing;
  }

  /**
   * The prompt `freezeSystemPrompt()` would serve, without storing anything: the frozen prompt, a current
   * stored one (adopted, as a cold start does), or else a rendering of the blocks' current values (blocks
   * not read yet are read). For estimates (a token count before compaction) that must not freeze a prompt
   * the model has not seen yet.
   */
  async previewSystemPrompt(): Promise<string> {
    const stored = await this.#frozen.stored(this.#registry);
    if (stored.state === "current") return stored.prompt;
    const unread = this.#registry.all().filter((config) => this.#cache.get(config.label) === undefined);
    await Promise.all(unread.map((config) => this.#io.readQueued(config)));
    return this.render();
  }

  /** Re-reads every provider, re-renders and overwrites the stored prompt: the one deliberate cache bust. */
  refreshSystemPrompt(): Promise<string> {
    return traced(
      this.#options.tracer,
      "contextblocks.refresh",
      () => ({ "contextblocks.blocks": this.#registry.all().length }),
      async (span) => {
        await this.load();
        const prompt = await this.#frozen.store(this.render(), this.#registry);
        const heard = this.#promptEvent(span, () => ({ type: "prompt-refreshed", prompt }), prompt);
        if (heard !== undefined) await heard;
        return prompt;
      },
    );
  }

  /**
   * Hears what happens to the blocks: `block-written` after a successful write (its `source`: a method or a
   * block tool), `prompt-frozen` when this instance froze the prompt (rendered or adopted from the store),
   * `prompt-refreshed` after `refreshSystemPrompt()` stored a new prompt (both with the prompt's SHA-256),
   * `reminder-sent` when `reminder({ sending: true })` returned a reminder. Listeners run after the
   * operation succeeded; what they throw is caught and never fails it. Returns the function that
   * unsubscribes.
   */
  subscribe(listener: ContextListener): () => void {
    return this.#listeners.add(listener);
  }

  /**
   * The current values of `whenChanged: "remind"` blocks whose rendering is no longer in the frozen prompt,
   * under a preamble, for the host to send after the cached prefix (end of the newest user message) and not
   * store. `null` when nothing changed or nothing is frozen (a stored prompt that drifted counts as nothing
   * frozen: the next `freezeSystemPrompt()` renders current values). Re-reads those blocks on every call
   * and compares with the frozen (stored) prompt, so it survives restarts and repeats until a refresh.
   * It never writes. With `{ sending: true }` (what the AI SDK adapter passes when it attaches the
   * reminder to a turn) a non-null reminder is also announced as `reminder-sent`.
   */
  reminder(options: { sending?: boolean } = {}): Promise<string | null> {
    const sending = options.sending === true;
    return traced(
      this.#options.tracer,
      "contextblocks.reminder",
      () => ({ "contextblocks.reminder.sending": sending }),
      async (span) => {
        const stored = await this.#frozen.stored(this.#registry);
        if (stored.state !== "current") return null;
        const remind = this.#registry.all().filter((config) => config.whenChanged === "remind");
        const blocks = await Promise.all(remind.map((config) => this.#io.readQueued(config)));
        const reminder = renderReminder(stored.prompt, blocks);
        const labels = reminder === null ? [] : changedLabels(stored.prompt, blocks);
        span?.setAttributes({
          [GEN_AI.recordCount]: labels.length,
          "contextblocks.reminder.labels": labels.join(","),
        });
        if (sending && reminder !== null) this.#listeners.emit({ type: "reminder-sent", reminder, labels });
        return reminder;
      },
    );
  }

  /** The framework-neutral tools the blocks allow. Descriptions depend only on the configuration. */
  toolSpecs(): ContextToolSpec[] {
    // The tools pass their call as the write's source; an entry write through a tool is marked too.
    const host: ToolHost = {
      getConfigs: () => this.getConfigs(),
      setBlock: (label, content, options) => this.setBlock(label, content, options),
      appendToBlock: (label, content, options) => this.appendToBlock(label, content, options),
      editBlock: (label, oldStr, newStr, options) => this.editBlock(label, oldStr, newStr, options),
      editEntry: (label, key, oldStr, newStr, options) => this.editEntry(label, key, oldStr, newStr, options),
      setEntry: (label, key, content, description, options = {}) =>
        this.#writeEntry(
          label,
          key,
          content,
          description,
          options.source ?? { kind: "tool", name: "set_context" },
        ),
      search: (label, query) => this.search(label, query),
      loadEntry: (label, key) => this.#readEntry(label, key, "tool"),
      unloadEntry: (label, key) => this.unloadEntry(label, key),
    };
    return buildToolSpecs(host, this.#options);
  }

  // ── Internals ─────────────────────────────────────────────────────────────────────────────────────────

  #requireEntryHistory(label: string, key: string) {
    const config = this.#registry.requireKeyed(label);
    requireString(label, "key", key);
    const provider = config.provider;
    if (!isVersionedSkillProvider(provider)) {
      throw new ContextError(
        "UNSUPPORTED",
        `Block "${label}": its provider keeps no entry versions (it is not loadable with set() and versions())`,
        { label },
      );
    }
    return { config, provider };
  }

  #requireHistory(label: string) {
    // A keyed block's history is per entry: say so instead of `requireWritable`'s advice on writing one.
    const kind = this.#registry.require(label).kind;
    if (kind === "searchable" || kind === "loadable") {
      throw new ContextError(
        "KEYED_BLOCK",
        `Block "${label}" is ${kind} and holds keyed entries: its versions are kept per entry: entryVersions(label, key) and restoreEntry(label, key, version)`,
        { label },
      );
    }
    const config = this.#registry.requireWritable(label);
    const provider = config.provider;
    if (!isVersionedProvider(provider)) {
      throw new ContextError(
        "UNSUPPORTED",
        `Block "${label}": its provider keeps no versions (it has no versions() method)`,
        { label },
      );
    }
    // The registry's own config, not a copy: the block cache keeps a write only for a registered config.
    return { config, provider };
  }

  /**
   * A freeze: the stored prompt adopted or rendered and stored. When nothing traces it or hears its event
   * and the prompt store reads synchronously (`getSync`), a current stored prompt is adopted in this very
   * call and returned as the string itself.
   */
  #freeze(): string | Promise<string> {
    const tracer = tracerInForce(this.#options.tracer);
    const configuration = this.#registry;
    if (tracer === undefined && this.#listenerCount === 0) {
      let stored: StoredPrompt | Promise<StoredPrompt>;
      try {
        stored = this.#frozen.stored(configuration);
      } catch (error) {
        return Promise.reject(error);
      }
      if (!isPromiseLike(stored) && stored.state === "current") return stored.prompt;
      return this.#freezeFrom(stored, undefined);
    }
    return traced(
      tracer,
      "contextblocks.freeze",
      () => ({}),
      (span) => this.#freezeFrom(this.#frozen.stored(configuration), span),
    );
  }

  async #freezeFrom(
    pending: StoredPrompt | Promise<StoredPrompt>,
    span: TraceSpan | undefined,
  ): Promise<string> {
    const stored = await pending;
    if (stored.state === "current") {
      span?.setAttributes({ "contextblocks.prompt.origin": "stored" });
      return this.#announceFrozen(span, stored.prompt, "stored");
    }
    if (stored.state === "drifted") return this.refreshSystemPrompt();
    // Nothing frozen yet: read every block, except those whose content this instance wrote itself since
    // it last read them (it knows that content), so a first freeze after setBlock costs no second read.
    const stale = this.#registry.all().filter((config) => !this.#cache.wroteItself(config.label));
    await Promise.all(stale.map((config) => this.#io.readQueued(config)));
    const prompt = await this.#frozen.store(this.render(), this.#registry);
    span?.setAttributes({
      "contextblocks.prompt.origin": "rendered",
      "contextblocks.blocks.read": stale.length,
    });
    return this.#announceFrozen(span, prompt, "rendered");
  }

  /** Tells the span and the listeners that `prompt` is now the frozen one, then returns it. */
  async #announceFrozen(
    span: TraceSpan | undefined,
    prompt: string,
    origin: PromptFrozenEvent["origin"],
  ): Promise<string> {
    const heard = this.#promptEvent(span, () => ({ type: "prompt-frozen", prompt, origin }), prompt);
    if (heard !== undefined) await heard;
    return prompt;
  }

  /**
   * Emits a prompt event with the prompt's SHA-256, computed only when heard, and sets the span's token
   * count. The hash goes on the span only when the tracer opts in to content: a hash of the prompt is
   * derived from what the blocks hold. `undefined` (nothing to wait for) when no one needs the hash.
   */
  #promptEvent(
    span: TraceSpan | undefined,
    event: () => Omit<Extract<ContextEvent, { type: "prompt-frozen" | "prompt-refreshed" }>, "hash">,
    prompt: string,
  ): Promise<void> | undefined {
    span?.setAttributes({ "contextblocks.prompt.tokens": this.#countTokens(prompt) });
    const hashSpan = span !== undefined && capturesContent(this.#options.tracer) ? span : undefined;
    if (hashSpan === undefined && this.#listenerCount === 0) return undefined;
    return this.#emitPromptEvent(hashSpan, event, prompt);
  }

  async #emitPromptEvent(
    hashSpan: TraceSpan | undefined,
    event: () => Omit<Extract<ContextEvent, { type: "prompt-frozen" | "prompt-refreshed" }>, "hash">,
    prompt: string,
  ): Promise<void> {
    const hash = await sha256Hex(prompt);
    hashSpan?.setAttributes({ "contextblocks.prompt.sha256": hash });
    if (this.#listenerCount > 0) this.#listeners.emit({ ...event(), hash } as ContextEvent);
  }

  /** Emits `block-written` after a successful write. */
  #written(label: string, action: BlockWriteAction, source: WriteSource, key?: string): void {
    if (this.#listenerCount === 0) return;
    this.#listeners.emit({
      type: "block-written",
      label,
      action,
      ...(key !== undefined ? { key } : {}),
      source,
    });
  }

  /** A write in a GenAI memory span: the block is the store, an entry's key the record. */
  #traceWrite<T>(
    operation: "update_memory" | "upsert_memory" | "delete_memory",
    label: string,
    record: { key?: string; content?: string; keyFrom?: WriteSource["kind"] },
    write: () => Promise<T>,
  ): Promise<T> {
    const { key, content, keyFrom = "api" } = record;
    return this.#traceMemory(
      operation,
      label,
      () => ({
        [GEN_AI.recordId]: this.#traceableKey(key, keyFrom),
        [GEN_AI.recordCount]: 1,
        [GEN_AI.records]:
          capturesContent(this.#options.tracer) && typeof content === "string"
            ? JSON.stringify([{ ...(key !== undefined ? { id: key } : {}), content }])
            : undefined,
      }),
      write,
    );
  }

  /**
   * An entry key as a span may carry it. A key the caller's code chose is a name, like a label; a key a
   * tool call gave is the model's (a title it chose, or a slug and hash of what it wrote), which is content:
   * on spans only when the tracer opts in to content.
   */
  #traceableKey(key: unknown, keyFrom: WriteSource["kind"]): string | undefined {
    if (typeof key !== "string") return undefined;
    return keyFrom === "api" || capturesContent(this.#options.tracer) ? key : undefined;
  }

  /**
   * An operation in a GenAI memory span (`gen_ai.operation.name`, the block as `gen_ai.memory.store.id`,
   * and the operation's own attributes, built only when something traces).
   */
  #traceMemory<T>(
    operation: "search_memory" | "update_memory" | "upsert_memory" | "delete_memory",
    label: string,
    attributes: () => TraceAttributes,
    run: (span: TraceSpan | undefined) => Promise<T>,
  ): Promise<T> {
    return traced(
      this.#options.tracer,
      operation,
      () => ({ [GEN_AI.operation]: operation, [GEN_AI.storeId]: label, ...attributes() }),
      run,
    );
  }

  /**
   * The prompt of the blocks as this instance holds them, rendered without reading or storing anything; for
   * subclasses (the agents drop-in's synchronous `refreshSnapshot`).
   */
  protected render(): string {
    return renderPrompt(this.#registry.all().flatMap((config) => this.#cache.get(config.label) ?? []));
  }
}

export { SYSTEM_PROMPT_LABEL };
