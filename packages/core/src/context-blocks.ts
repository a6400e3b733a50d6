import { BlockCache } from "./block-cache.js";
import { BlockIO } from "./block-io.js";
import { BlockQueue } from "./block-queue.js";
import { isWritableProvider } from "./capabilities.js";
import type { ResolvedConfig } from "./config.js";
import { describeValue } from "./describe-value.js";
import type { DriftPolicy } from "./drift.js";
import { LoadedEntries, type LoadedEntry } from "./entries.js";
import { ContextError } from "./errors.js";
import { type ContextEvent, type ContextListener, Listeners } from "./events.js";
import { FrozenPrompt, SYSTEM_PROMPT_LABEL } from "./frozen-prompt.js";
import { checkTokenLimit, requireString } from "./limits.js";
import { renderPrompt, toOneLine } from "./prompt-format.js";
import { ProviderCalls } from "./provider-calls.js";
import { BlockRegistry } from "./registry.js";
import { renderReminder } from "./reminder.js";
import { estimateTokens, type TokenCounter } from "./tokens.js";
import { buildToolSpecs } from "./tools/build.js";
import type { ContextToolSpec, ToolOptions } from "./tools/spec.js";
import type { AnyContextProvider, ContextBlock, ContextConfig, WritableContextProvider } from "./types.js";

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
}

/**
 * An agent's system prompt assembled from labelled blocks, each backed by a provider. The prompt is frozen
 * so the model provider's prefix cache stays warm; changes reach the model through `reminder()` or the one
 * deliberate rebuild, `refreshSystemPrompt()`. A facade over its parts: the block registry, the block
 * cache, the per-block queue and I/O, the provider calls, the loaded entries and the frozen prompt.
 */
export class ContextBlocks {
  private readonly registry: BlockRegistry;
  private readonly cache: BlockCache;
  private readonly io: BlockIO;
  private readonly calls: ProviderCalls;
  private readonly loaded = new LoadedEntries();
  private readonly frozen: FrozenPrompt;
  private readonly options: ContextBlocksOptions;
  private readonly countTokens: TokenCounter;
  private freezing: Promise<string> | undefined;
  private readonly listeners = new Listeners<ContextEvent>();

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
    this.options = options;
    this.countTokens = options.tokenCounter ?? estimateTokens;
    this.registry = new BlockRegistry(defaultProvider ?? undefined, new Set(options.reservedLabels ?? []));
    this.cache = new BlockCache(this.countTokens);
    this.calls = new ProviderCalls(timeout);
    this.io = new BlockIO(this.registry, this.cache, new BlockQueue(), this.calls, this.countTokens);
    this.frozen = new FrozenPrompt(
      promptStore ?? undefined,
      this.calls,
      options.drift ?? "rerender",
      options.onDrift ?? ((message: string) => console.warn(`contextblocks: ${message}`)),
    );
    for (const config of configs) this.registry.add(config);
  }

  // ── Blocks ────────────────────────────────────────────────────────────────────────────────────────────

  /** Reads every block from its provider. Other entry points load lazily, one block at a time. */
  async load(): Promise<void> {
    await Promise.all(this.registry.all().map((config) => this.io.readQueued(config)));
  }

  /** Adds a block at the end. Its provider is read now; the frozen prompt is unchanged until a refresh. */
  async addBlock(config: ContextConfig): Promise<ContextBlock> {
    const resolved = this.registry.add(config);
    try {
      return { ...(await this.io.readQueued(resolved)) };
    } catch (error) {
      this.removeBlock(resolved.label);
      throw error;
    }
  }

  /** Removes a block. The frozen prompt is unchanged until a refresh. False when there was none. */
  removeBlock(label: string): boolean {
    if (!this.registry.remove(label)) return false;
    this.cache.forget(label);
    this.loaded.removeBlock(label);
    return true;
  }

  /** The block as last read, or `null` when it is unknown or not read yet (`load()` reads all). */
  getBlock(label: string): ContextBlock | null {
    const block = this.cache.get(label);
    return block ? { ...block } : null;
  }

  /** The blocks read so far, in declaration order. */
  getBlocks(): ContextBlock[] {
    return this.registry.all().flatMap((config) => {
      const block = this.cache.get(config.label);
      return block ? [{ ...block }] : [];
    });
  }

  /** The configuration in force, with default providers filled in. */
  getConfigs(): readonly ResolvedConfig[] {
    return [...this.registry.all()];
  }

  /** Counts tokens with the configured counter. */
  estimateTokens(text: string): number {
    return this.countTokens(text);
  }

  // ── Writes ────────────────────────────────────────────────────────────────────────────────────────────

  /** Replaces a writable block's content in its provider. The frozen prompt is unchanged. */
  async setBlock(label: string, content: string): Promise<ContextBlock> {
    const config = this.registry.requireWritable(label);
    requireString(label, "content", content);
    const block = await this.io.write(config, async () => content);
    this.listeners.emit({ type: "block-written", label, action: "set" });
    return block;
  }

  /** Appends to a writable block, with a newline between old and new text when neither has one. */
  async appendToBlock(label: string, content: string): Promise<ContextBlock> {
    const config = this.registry.requireWritable(label);
    requireString(label, "content", content);
    const block = await this.io.write(config, async (current) => {
      const before = await current();
      const separator = before.length > 0 && !before.endsWith("\n") && !content.startsWith("\n") ? "\n" : "";
      return before + separator + content;
    });
    this.listeners.emit({ type: "block-written", label, action: "append" });
    return block;
  }

  /**
   * Adds or replaces one keyed entry of a searchable or loadable block (`description` is kept by loadable
   * providers; it is listed on one line, so line breaks and control characters in it become spaces).
   * `maxTokens` applies to each entry: its content and description together.
   */
  async setEntry(label: string, key: string, content: string, description?: string): Promise<ContextBlock> {
    const config = this.registry.requireKeyed(label);
    requireString(label, "key", key);
    requireString(label, "content", content);
    if (key.length === 0)
      throw new ContextError("INVALID_INPUT", `Block "${label}": an entry key must not be empty`, { label });
    if (description !== undefined) requireString(label, "description", description);
    const provider = config.provider;
    const set = provider.set;
    if (typeof set !== "function") {
      throw new ContextError("READONLY", `Block "${label}" is readonly: its provider has no set()`, {
        label,
      });
    }
    const listed = description === undefined ? undefined : toOneLine(description);
    checkTokenLimit(config, this.countTokens, "entry", content, listed);
    const block = await this.io.changeEntry(config, () =>
      listed === undefined ? set.call(provider, key, content) : set.call(provider, key, content, listed),
    );
    this.listeners.emit({ type: "block-written", label, action: "set-entry", key });
    return block;
  }

  /** Removes one keyed entry, when the provider can delete. */
  async deleteEntry(label: string, key: string): Promise<ContextBlock> {
    const config = this.registry.requireKeyed(label);
    requireString(label, "key", key);
    const provider = config.provider;
    const remove = provider.delete;
    if (typeof remove !== "function") {
      throw new ContextError("UNSUPPORTED", `Block "${label}": its provider cannot delete entries`, {
        label,
      });
    }
    const block = await this.io.changeEntry(config, async () => {
      await remove.call(provider, key);
      this.loaded.remove({ label, key });
    });
    this.listeners.emit({ type: "block-written", label, action: "delete-entry", key });
    return block;
  }

  // ── Keyed reads ───────────────────────────────────────────────────────────────────────────────────────

  /** Ranked matches from a searchable block, or `null` when nothing matches. */
  async search(label: string, query: string): Promise<string | null> {
    const config = this.registry.require(label);
    if (config.kind !== "searchable") {
      throw new ContextError("UNSUPPORTED", `Block "${label}" is not searchable`, { label });
    }
    requireString(label, "query", query);
    return this.calls.run(label, config.provider, () => config.provider.search(query));
  }

  /** One entry of a loadable block in full, or `null` for an unknown key. Marks it loaded. */
  async loadEntry(label: string, key: string): Promise<string | null> {
    const config = this.registry.require(label);
    if (config.kind !== "loadable") {
      throw new ContextError("UNSUPPORTED", `Block "${label}" is not loadable`, { label });
    }
    requireString(label, "key", key);
    const content = await this.calls.run(label, config.provider, () => config.provider.load(key));
    if (content !== null) this.loaded.add({ label, key });
    return content;
  }

  /**
   * Marks an entry loaded without reading it: for a host restoring, after a restart, what its transcript
   * shows was loaded (so `unload_context` finds it). False when the block is not loadable or not known.
   */
  restoreLoadedEntry(label: string, key: string): boolean {
    if (typeof key !== "string" || this.registry.find(label)?.kind !== "loadable") return false;
    this.loaded.add({ label, key });
    return true;
  }

  /** Marks an entry unloaded. False when it was not loaded in this instance. */
  unloadEntry(label: string, key: string): boolean {
    return this.loaded.remove({ label, key });
  }

  /** Entries loaded in this instance and not unloaded since. */
  loadedEntries(): LoadedEntry[] {
    return this.loaded.list();
  }

  // ── The frozen prompt ─────────────────────────────────────────────────────────────────────────────────

  /**
   * The frozen system prompt: rendered once, then the identical string on every call. With a prompt store,
   * a cold start returns the stored string without reading any block, unless it drifted from the
   * configuration and the policy is `"rerender"`: then this call (the only one that may) renders the prompt
   * again and stores it. A warm call reads nothing.
   */
  freezeSystemPrompt(): Promise<string> {
    const current = this.frozen.current();
    if (current !== null) return Promise.resolve(current);
    this.freezing ??= this.freeze().finally(() => {
      this.freezing = undefined;
    });
    return this.freezing;
  }

  /**
   * The prompt `freezeSystemPrompt()` would serve, without storing anything: the frozen prompt, a current
   * stored one (adopted, as a cold start does), or else a rendering of the blocks' current values (blocks
   * not read yet are read). For estimates (a token count before compaction) that must not freeze a prompt
   * the model has not seen yet.
   */
  async previewSystemPrompt(): Promise<string> {
    const stored = await this.frozen.stored(this.registry.all());
    if (stored.state === "current") return stored.prompt;
    const unread = this.registry.all().filter((config) => this.cache.get(config.label) === undefined);
    await Promise.all(unread.map((config) => this.io.readQueued(config)));
    return this.render();
  }

  /** Re-reads every provider, re-renders and overwrites the stored prompt: the one deliberate cache bust. */
  async refreshSystemPrompt(): Promise<string> {
    await this.load();
    const prompt = await this.frozen.store(this.render());
    this.listeners.emit({ type: "prompt-refreshed", prompt });
    return prompt;
  }

  /**
   * Hears what happens to the blocks: `block-written` after a successful write (a method or a tool call),
   * `prompt-refreshed` after `refreshSystemPrompt()` stored a new prompt. Listeners run after the operation
   * succeeded; what they throw is caught and never fails it. Returns the function that unsubscribes.
   */
  subscribe(listener: ContextListener): () => void {
    return this.listeners.add(listener);
  }

  /**
   * The current values of `whenChanged: "remind"` blocks whose rendering is no longer in the frozen prompt,
   * under a preamble, for the host to send after the cached prefix (end of the newest user message) and not
   * store. `null` when nothing changed or nothing is frozen (a stored prompt that drifted counts as nothing
   * frozen: the next `freezeSystemPrompt()` renders current values). Re-reads those blocks on every call
   * and compares with the frozen (stored) prompt, so it survives restarts and repeats until a refresh.
   * It never writes.
   */
  async reminder(): Promise<string | null> {
    const stored = await this.frozen.stored(this.registry.all());
    if (stored.state !== "current") return null;
    const remind = this.registry.all().filter((config) => config.whenChanged === "remind");
    const blocks = await Promise.all(remind.map((config) => this.io.readQueued(config)));
    return renderReminder(stored.prompt, blocks);
  }

  /** The framework-neutral tools the blocks allow. Descriptions depend only on the configuration. */
  toolSpecs(): ContextToolSpec[] {
    return buildToolSpecs(this, this.options);
  }

  // ── Internals ─────────────────────────────────────────────────────────────────────────────────────────

  private async freeze(): Promise<string> {
    const stored = await this.frozen.stored(this.registry.all());
    if (stored.state === "current") return stored.prompt;
    if (stored.state === "drifted") return this.refreshSystemPrompt();
    // Nothing frozen yet: read every block, except those whose content this instance wrote itself since it
    // last read them (it knows that content), so a first freeze after setBlock costs no second read.
    const stale = this.registry.all().filter((config) => !this.cache.wroteItself(config.label));
    await Promise.all(stale.map((config) => this.io.readQueued(config)));
    return this.frozen.store(this.render());
  }

  private render(): string {
    return renderPrompt(this.registry.all().flatMap((config) => this.cache.get(config.label) ?? []));
  }
}

export { SYSTEM_PROMPT_LABEL };
