import { acceptsWrites, isSearchProvider, isSkillProvider, isWritableProvider } from "./capabilities.js";
import { describe, type ResolvedConfig, resolveConfig } from "./config.js";
import { type DriftPolicy, detectDrift } from "./drift.js";
import { ContextError } from "./errors.js";
import { renderReminder } from "./reminder.js";
import { renderPrompt } from "./render.js";
import { estimateTokens, type TokenCounter } from "./tokens.js";
import { buildToolSpecs, type ContextToolSpec, type ToolOptions } from "./tools/build.js";
import type { AnyContextProvider, ContextBlock, ContextConfig, WritableContextProvider } from "./types.js";
import { WriteQueue } from "./write-queue.js";

/** The label the prompt store is initialised with. */
export const SYSTEM_PROMPT_LABEL = "_system_prompt";

/** Extras after the seeds' three constructor arguments. */
export interface ContextBlocksOptions extends ToolOptions {
  /** Counts tokens for usage and `maxTokens`. Default: `estimateTokens`, a heuristic (see its docs). */
  tokenCounter?: TokenCounter;
  /**
   * What a cold start does when the stored prompt was rendered from a different block configuration
   * (a block added, removed, renamed, or its description, limit or kind changed). Default `"rerender"`:
   * render once from the providers and store the result. `"keep"`: serve the stored prompt until
   * `refreshSystemPrompt()`. Either way `onDrift` hears about it.
   */
  drift?: DriftPolicy;
  /** Called with the reason when drift is detected. Default: `console.warn`. */
  onDrift?: (reason: string) => void;
}

/** An entry brought into the conversation by `load_context`. */
export interface LoadedEntry {
  label: string;
  key: string;
}

/**
 * An agent's system prompt assembled from labelled blocks, each backed by a provider. The prompt is frozen
 * so the model provider's prefix cache stays warm; changes reach the model through `reminder()` or the one
 * deliberate rebuild, `refreshSystemPrompt()`.
 */
export class ContextBlocks {
  private readonly configs: ResolvedConfig[] = [];
  private readonly blocks = new Map<string, ContextBlock>();
  /** Upper-cased label (the header) → label, to refuse two blocks rendering under one header. */
  private readonly headerLabels = new Map<string, string>();
  /** Blocks whose in-memory content comes from this instance's own write, not from a read. */
  private readonly writtenSinceRead = new Set<string>();
  /** One `init(label)` per block: every first use waits for the same call. */
  private readonly initialized = new WeakMap<ResolvedConfig, Promise<void>>();
  private readonly writes = new WriteQueue();
  private readonly loaded = new Map<string, LoadedEntry>();
  private readonly promptStore: WritableContextProvider | undefined;
  private readonly defaultProvider: ((label: string) => AnyContextProvider) | undefined;
  private readonly options: ContextBlocksOptions;
  private readonly countTokens: TokenCounter;
  private snapshot: string | null = null;
  private promptStoreReady: Promise<void> | undefined;
  private freezing: Promise<string> | undefined;

  /**
   * @param configs The blocks, in prompt order.
   * @param promptStore Persists the frozen prompt so a cold start returns the very string the model cached.
   * @param defaultProvider Storage for blocks declared without a provider, by label.
   * @param options Token counter, drift policy, tool limits.
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
        `ContextBlocks expects an array of block configs, got ${describe(configs)}`,
      );
    }
    if (promptStore != null && !isWritableProvider(promptStore)) {
      throw new ContextError("INVALID_CONFIG", "The prompt store must be a writable provider (get and set)");
    }
    this.promptStore = promptStore ?? undefined;
    this.defaultProvider = defaultProvider ?? undefined;
    this.options = options;
    this.countTokens = options.tokenCounter ?? estimateTokens;
    for (const config of configs) this.addConfig(config);
  }

  // ── Blocks ────────────────────────────────────────────────────────────────────────────────────────────

  /** Reads every block from its provider. Other entry points load lazily, one block at a time. */
  async load(): Promise<void> {
    await Promise.all(this.configs.map((config) => this.readBlock(config)));
  }

  /** Adds a block at the end. Its provider is read now; the frozen prompt is unchanged until a refresh. */
  async addBlock(config: ContextConfig): Promise<ContextBlock> {
    const resolved = this.addConfig(config);
    try {
      return copy(await this.readBlock(resolved));
    } catch (error) {
      this.removeBlock(resolved.label);
      throw error;
    }
  }

  /** Removes a block. The frozen prompt is unchanged until a refresh. False when there was none. */
  removeBlock(label: string): boolean {
    const index = this.configs.findIndex((config) => config.label === label);
    if (index === -1) return false;
    this.configs.splice(index, 1);
    this.headerLabels.delete(label.toUpperCase());
    this.writtenSinceRead.delete(label);
    this.blocks.delete(label);
    for (const [id, entry] of this.loaded) if (entry.label === label) this.loaded.delete(id);
    return true;
  }

  /** The block as last read, or `null` when it is unknown or not read yet (`load()` reads all). */
  getBlock(label: string): ContextBlock | null {
    const block = this.blocks.get(label);
    return block ? copy(block) : null;
  }

  /** The blocks read so far, in declaration order. */
  getBlocks(): ContextBlock[] {
    return this.configs.flatMap((config) => {
      const block = this.blocks.get(config.label);
      return block ? [copy(block)] : [];
    });
  }

  /** The configuration in force, with default providers filled in. */
  getConfigs(): readonly ResolvedConfig[] {
    return [...this.configs];
  }

  /** Counts tokens with the configured counter. */
  estimateTokens(text: string): number {
    return this.countTokens(text);
  }

  // ── Writes ────────────────────────────────────────────────────────────────────────────────────────────

  /** Replaces a writable block's content in its provider. The frozen prompt is unchanged. */
  async setBlock(label: string, content: string): Promise<ContextBlock> {
    const config = this.writableConfig(label, content);
    return this.writes.run(label, () => this.writeWhole(config, content));
  }

  /** Appends to a writable block, with a newline between old and new text when neither has one. */
  async appendToBlock(label: string, content: string): Promise<ContextBlock> {
    const config = this.writableConfig(label, content);
    return this.writes.run(label, async () => {
      const current = (await this.readBlockOnce(config)).content;
      const separator =
        current.length > 0 && !current.endsWith("\n") && !content.startsWith("\n") ? "\n" : "";
      return this.writeWhole(config, current + separator + content);
    });
  }

  /**
   * Adds or replaces one keyed entry of a searchable or loadable block (`description` is kept by loadable
   * providers). `maxTokens` applies to each entry.
   */
  async setEntry(label: string, key: string, content: string, description?: string): Promise<ContextBlock> {
    const config = this.keyedConfig(label);
    requireString(label, "key", key);
    requireString(label, "content", content);
    if (key.length === 0)
      throw new ContextError("INVALID_INPUT", `Block "${label}": an entry key must not be empty`, { label });
    if (description !== undefined) requireString(label, "description", description);
    if (!acceptsWrites(config.provider)) {
      throw new ContextError("READONLY", `Block "${label}" is readonly: its provider has no set()`, {
        label,
      });
    }
    this.checkLimit(config, content, "entry");
    return this.writes.run(label, async () => {
      await this.initOnce(config);
      const provider = config.provider as {
        set(key: string, content: string, description?: string): Promise<void>;
      };
      await this.callProvider(label, () =>
        description === undefined ? provider.set(key, content) : provider.set(key, content, description),
      );
      return copy(await this.readBlock(config));
    });
  }

  /** Removes one keyed entry, when the provider can delete. */
  async deleteEntry(label: string, key: string): Promise<ContextBlock> {
    const config = this.keyedConfig(label);
    requireString(label, "key", key);
    const provider = config.provider as { delete?: (key: string) => Promise<void> };
    if (typeof provider.delete !== "function") {
      throw new ContextError("UNSUPPORTED", `Block "${label}": its provider cannot delete entries`, {
        label,
      });
    }
    return this.writes.run(label, async () => {
      await this.initOnce(config);
      await this.callProvider(label, () => provider.delete?.(key) ?? Promise.resolve());
      this.loaded.delete(entryId(label, key));
      return copy(await this.readBlock(config));
    });
  }

  // ── Keyed reads ───────────────────────────────────────────────────────────────────────────────────────

  /** Ranked matches from a searchable block, or `null` when nothing matches. */
  async search(label: string, query: string): Promise<string | null> {
    const config = this.requireConfig(label);
    const provider = config.provider;
    if (!isSearchProvider(provider)) {
      throw new ContextError("UNSUPPORTED", `Block "${label}" is not searchable`, { label });
    }
    requireString(label, "query", query);
    await this.initOnce(config);
    return this.callProvider(label, () => provider.search(query));
  }

  /** One entry of a loadable block in full, or `null` for an unknown key. Marks it loaded. */
  async loadEntry(label: string, key: string): Promise<string | null> {
    const config = this.requireConfig(label);
    const provider = config.provider;
    if (!isSkillProvider(provider)) {
      throw new ContextError("UNSUPPORTED", `Block "${label}" is not loadable`, { label });
    }
    requireString(label, "key", key);
    await this.initOnce(config);
    const content = await this.callProvider(label, () => provider.load(key));
    if (content !== null) this.loaded.set(entryId(label, key), { label, key });
    return content;
  }

  /** Marks an entry unloaded. False when it was not loaded in this instance. */
  unloadEntry(label: string, key: string): boolean {
    return this.loaded.delete(entryId(label, key));
  }

  /** Entries loaded in this instance and not unloaded since. */
  loadedEntries(): LoadedEntry[] {
    return [...this.loaded.values()];
  }

  // ── The frozen prompt ─────────────────────────────────────────────────────────────────────────────────

  /**
   * The frozen system prompt: rendered once, then the identical string on every call. With a prompt store,
   * a cold start returns the stored string without reading any block (after a drift check, see options).
   * A warm call reads nothing.
   */
  freezeSystemPrompt(): Promise<string> {
    if (this.snapshot !== null) return Promise.resolve(this.snapshot);
    this.freezing ??= this.freeze().finally(() => {
      this.freezing = undefined;
    });
    return this.freezing;
  }

  /** Re-reads every provider, re-renders and overwrites the stored prompt: the one deliberate cache bust. */
  async refreshSystemPrompt(): Promise<string> {
    await this.load();
    return this.storePrompt(this.render());
  }

  /** Persists a newly rendered prompt (when there is a store) and makes it the frozen one. */
  private async storePrompt(prompt: string): Promise<string> {
    const promptStore = this.promptStore;
    if (promptStore) {
      await this.readyPromptStore();
      await this.callProvider(SYSTEM_PROMPT_LABEL, () => promptStore.set(prompt));
    }
    this.snapshot = prompt;
    return prompt;
  }

  /**
   * The current values of `whenChanged: "remind"` blocks whose rendering is no longer in the frozen prompt,
   * under a preamble, for the host to send after the cached prefix (end of the newest user message) and not
   * store. `null` when nothing changed or nothing is frozen. Re-reads those blocks on every call and
   * compares with the frozen (stored) prompt, so it survives restarts and repeats until a refresh.
   */
  async reminder(): Promise<string | null> {
    const frozen = this.snapshot ?? (await this.adoptStoredPrompt());
    if (frozen === null) return null;
    const remind = this.configs.filter((config) => config.whenChanged === "remind");
    const blocks = await Promise.all(remind.map((config) => this.readBlock(config)));
    return renderReminder(frozen, blocks);
  }

  /** The framework-neutral tools the blocks allow. Descriptions depend only on the configuration. */
  toolSpecs(): ContextToolSpec[] {
    return buildToolSpecs(this, this.options);
  }

  // ── Internals ─────────────────────────────────────────────────────────────────────────────────────────

  private addConfig(config: ContextConfig): ResolvedConfig {
    const resolved = resolveConfig(config, this.defaultProvider);
    const header = resolved.label.toUpperCase();
    const clashLabel = this.headerLabels.get(header);
    const clash = clashLabel === undefined ? undefined : { label: clashLabel };
    if (clash?.label === resolved.label) {
      throw new ContextError("INVALID_CONFIG", `Block "${resolved.label}" is declared twice`, {
        label: resolved.label,
      });
    }
    if (clash) {
      // Headers are upper-cased: two such blocks would render under the same header and could pass for
      // each other in reminders and drift detection.
      throw new ContextError(
        "INVALID_CONFIG",
        `Block "${resolved.label}" would render under the same header as block "${clash.label}" (${header})`,
        { label: resolved.label },
      );
    }
    this.configs.push(resolved);
    this.headerLabels.set(header, resolved.label);
    return resolved;
  }

  private async freeze(): Promise<string> {
    const stored = await this.adoptStoredPrompt();
    if (stored !== null) return stored;
    if (this.snapshot !== null) return this.snapshot;
    // Nothing frozen yet: read every block, except those whose content this instance wrote itself since it
    // last read them (it knows that content), so a first freeze after setBlock costs no second read.
    const stale = this.configs.filter((config) => !this.writtenSinceRead.has(config.label));
    await Promise.all(stale.map((config) => this.readBlock(config)));
    return this.storePrompt(this.render());
  }

  /**
   * On a cold start, takes the stored prompt as the frozen one, unless the configuration drifted from it
   * and the policy is to re-render. Returns the frozen prompt, or `null` when there is none.
   */
  private async adoptStoredPrompt(): Promise<string | null> {
    const promptStore = this.promptStore;
    if (this.snapshot !== null || !promptStore) return this.snapshot;
    await this.readyPromptStore();
    const stored = (await this.callProvider(SYSTEM_PROMPT_LABEL, () => promptStore.get())) ?? null;
    if (stored === null || this.snapshot !== null) return this.snapshot ?? stored;
    if (typeof stored !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `The prompt store returned ${describe(stored)}, not a string`,
      );
    }
    const reason = detectDrift(stored, this.configs);
    if (reason !== null) {
      (this.options.onDrift ?? ((message: string) => console.warn(`contextblocks: ${message}`)))(
        `stored prompt does not match the block configuration: ${reason}`,
      );
      if ((this.options.drift ?? "rerender") === "rerender") return this.refreshSystemPrompt();
    }
    this.snapshot = stored;
    return stored;
  }

  private readyPromptStore(): Promise<void> {
    const store = this.promptStore;
    this.promptStoreReady ??= this.callProvider(SYSTEM_PROMPT_LABEL, async () => {
      await store?.init?.(SYSTEM_PROMPT_LABEL);
    }).catch((error: unknown) => {
      // A failed init is not remembered: the next use tries again.
      this.promptStoreReady = undefined;
      throw error;
    });
    return this.promptStoreReady;
  }

  private render(): string {
    return renderPrompt(this.configs.flatMap((config) => this.blocks.get(config.label) ?? []));
  }

  /**
   * Calls the provider's `init(label)` once, before its first use. Parallel first uses all wait for that one
   * call; a failed init surfaces as `PROVIDER_FAILED` and is tried again on the next use.
   */
  private initOnce(config: ResolvedConfig): Promise<void> {
    let ready = this.initialized.get(config);
    if (!ready) {
      const provider = config.provider;
      ready = this.callProvider(config.label, async () => {
        await provider?.init?.(config.label);
      }).catch((error: unknown) => {
        this.initialized.delete(config);
        throw error;
      });
      this.initialized.set(config, ready);
    }
    return ready;
  }

  /** Reads a block from its provider now and keeps the result. */
  private async readBlock(config: ResolvedConfig): Promise<ContextBlock> {
    await this.initOnce(config);
    const provider = config.provider;
    // `undefined` reads as "no content", as agents/context reads it: a JS provider may forget the `null`.
    const value = provider ? ((await this.callProvider(config.label, () => provider.get())) ?? null) : null;
    if (value !== null && typeof value !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `Block "${config.label}": its provider's get() returned ${describe(value)}, not a string or null`,
        { label: config.label },
      );
    }
    const block = this.toBlock(config, value ?? "");
    // A block removed while its read was in flight stays removed.
    if (this.configs.includes(config)) {
      this.blocks.set(config.label, block);
      this.writtenSinceRead.delete(config.label);
    }
    return block;
  }

  private async readBlockOnce(config: ResolvedConfig): Promise<ContextBlock> {
    return this.blocks.get(config.label) ?? this.readBlock(config);
  }

  private toBlock(config: ResolvedConfig, content: string): ContextBlock {
    return {
      label: config.label,
      ...(config.description !== undefined ? { description: config.description } : {}),
      content,
      tokens: this.tokensOf(config.label, content),
      ...(config.maxTokens !== undefined ? { maxTokens: config.maxTokens } : {}),
      kind: config.kind,
      whenChanged: config.whenChanged,
      writable: acceptsWrites(config.provider),
      isSearchable: config.kind === "searchable",
      isLoadable: config.kind === "loadable",
    };
  }

  /** Counts a block's tokens, reusing the last count while its content is unchanged (re-reads, reminders). */
  private tokensOf(label: string, content: string): number {
    const previous = this.blocks.get(label);
    return previous !== undefined && previous.content === content
      ? previous.tokens
      : this.countTokens(content);
  }

  private async writeWhole(config: ResolvedConfig, content: string): Promise<ContextBlock> {
    this.checkLimit(config, content, "block");
    await this.initOnce(config);
    const provider = config.provider as WritableContextProvider;
    await this.callProvider(config.label, () => provider.set(content));
    const block = this.toBlock(config, content);
    if (this.configs.includes(config)) {
      this.blocks.set(config.label, block);
      this.writtenSinceRead.add(config.label);
    }
    return copy(block);
  }

  private checkLimit(config: ResolvedConfig, content: string, what: "block" | "entry"): void {
    if (config.maxTokens === undefined) return;
    const tokens = this.countTokens(content);
    if (tokens > config.maxTokens) {
      throw new ContextError(
        "MAX_TOKENS",
        `Block "${config.label}" ${what === "block" ? "exceeds" : "entry exceeds"} maxTokens: ${tokens} > ${config.maxTokens} (estimated tokens)`,
        { label: config.label },
      );
    }
  }

  private requireConfig(label: string): ResolvedConfig {
    const config = this.configs.find((candidate) => candidate.label === label);
    if (!config) {
      const known = this.configs.map((candidate) => candidate.label).join(", ") || "none";
      throw new ContextError("NOT_FOUND", `Block "${String(label)}" not found. Blocks: ${known}`, {
        label: String(label),
      });
    }
    return config;
  }

  private writableConfig(label: string, content: string): ResolvedConfig {
    const config = this.requireConfig(label);
    if (config.kind === "searchable" || config.kind === "loadable") {
      throw new ContextError(
        "KEYED_BLOCK",
        `Block "${label}" is ${config.kind} and holds keyed entries: write one entry with setEntry(label, key, content)`,
        { label },
      );
    }
    if (config.kind !== "writable") {
      throw new ContextError("READONLY", `Block "${label}" is readonly`, { label });
    }
    requireString(label, "content", content);
    return config;
  }

  private keyedConfig(label: string): ResolvedConfig {
    const config = this.requireConfig(label);
    if (config.kind === "readonly")
      throw new ContextError("READONLY", `Block "${label}" is readonly`, { label });
    if (config.kind === "writable") {
      throw new ContextError(
        "KEYED_BLOCK",
        `Block "${label}" is a plain writable block: use setBlock(label, content)`,
        {
          label,
        },
      );
    }
    return config;
  }

  /** Runs a provider call; a failure surfaces as `PROVIDER_FAILED` naming the block, with the cause. */
  private async callProvider<T>(label: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ContextError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new ContextError("PROVIDER_FAILED", `Block "${label}": provider failed: ${message}`, {
        label,
        cause: error,
      });
    }
  }
}

function requireString(label: string, field: string, value: unknown): asserts value is string {
  if (typeof value !== "string") {
    throw new ContextError(
      "INVALID_INPUT",
      `Block "${label}": ${field} must be a string, got ${describe(value)}`,
      {
        label,
      },
    );
  }
}

function copy(block: ContextBlock): ContextBlock {
  return { ...block };
}

function entryId(label: string, key: string): string {
  return JSON.stringify([label, key]);
}
