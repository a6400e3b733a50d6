import type { BlockCache } from "./block-cache.js";
import type { BlockQueue } from "./block-queue.js";
import { isConditionalProvider } from "./capabilities.js";
import type { ResolvedConfig } from "./config.js";
import { ContextError } from "./errors.js";
import { checkTokenLimit } from "./limits.js";
import { isPromiseLike, type ProviderCalls, providerText } from "./provider-calls.js";
import type { BlockRegistry } from "./registry.js";
import type { TokenCounter } from "./tokens.js";
import type { BlockWrite, ContextBlock } from "./types.js";

/** How many times a conditional write is tried again after another writer changed the block. */
export const CONFLICT_RETRIES = 4;

/**
 * A copy of `write` for one provider call: a provider that changes the object it is handed (deletes its
 * source, rewrites its call id) cannot change what a retried `setIf` sends, nor the source of the
 * `block-written` event, which reads the same source. Entry writes use it too.
 */
export function freshWrite(write: BlockWrite): BlockWrite {
  return write.source === undefined ? { ...write } : { ...write, source: { ...write.source } };
}

type WritableConfig = Extract<ResolvedConfig, { kind: "writable" }>;
type KeyedConfig = Extract<ResolvedConfig, { kind: "searchable" | "loadable" }>;

/**
 * Reads and writes of blocks. Every read and write of one block runs in that block's queue, so a read
 * that started before a write can never replace what the write produced (`readQueued`); work already in
 * the queue uses `readNow`.
 */
export class BlockIO {
  readonly #registry: BlockRegistry;
  readonly #cache: BlockCache;
  readonly #queue: BlockQueue;
  readonly #calls: ProviderCalls;
  readonly #countTokens: TokenCounter;

  constructor(
    registry: BlockRegistry,
    cache: BlockCache,
    queue: BlockQueue,
    calls: ProviderCalls,
    countTokens: TokenCounter,
  ) {
    this.#registry = registry;
    this.#cache = cache;
    this.#queue = queue;
    this.#calls = calls;
    this.#countTokens = countTokens;
  }

  /**
   * Reads a block in its turn after the reads and writes called before it. With nothing of the block
   * queued, the read starts now (its turn is now), and a provider that answers synchronously (`getSync`)
   * gives the block without a turn of the queue.
   */
  readQueued(config: ResolvedConfig): Promise<ContextBlock> {
    if (!this.#queue.idle(config.label)) return this.#queue.run(config.label, () => this.readNow(config));
    let read: ContextBlock | Promise<ContextBlock>;
    try {
      read = this.#read(config);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!isPromiseLike(read)) return Promise.resolve(read);
    const pending = read;
    return this.#queue.run(config.label, () => pending);
  }

  /** Reads a block from its provider now and keeps the result. Only from inside the block's queue. */
  async readNow(config: ResolvedConfig): Promise<ContextBlock> {
    return this.#read(config);
  }

  /** Reads a block now: the block itself when the provider answered synchronously, else a promise of it. */
  #read(config: ResolvedConfig): ContextBlock | Promise<ContextBlock> {
    const provider = config.provider;
    if (provider === undefined) return this.#keepRead(config, null);
    const value = this.#calls.read(config.label, provider);
    if (isPromiseLike(value)) return Promise.resolve(value).then((read) => this.#keepRead(config, read));
    return this.#keepRead(config, value);
  }

  /** The block `config` has with the value its provider gave, kept unless the block was removed meanwhile. */
  #keepRead(config: ResolvedConfig, read: unknown): ContextBlock {
    const value = providerText(config.label, "get()", read);
    const block = this.#cache.build(config, value ?? "");
    // A block removed while its read was in flight stays removed.
    if (this.#registry.has(config)) this.#cache.keep(block, false);
    return block;
  }

  /**
   * Replaces a writable block's content. `next` computes it from the current content, in queue order; a
   * write that does not depend on the current content passes `derived: false` and reads nothing. A derived
   * write (append, edit) on a provider with `setIf` reads the stored text fresh (another agent may share
   * the block) and writes only if it is still that text; when it changed meanwhile, `next` runs again on
   * the new text (an edit whose `old_str` is gone then fails), up to `CONFLICT_RETRIES` times.
   */
  write(
    config: WritableConfig,
    next: (current: () => Promise<string>) => Promise<string>,
    write: BlockWrite,
    derived = true,
  ) {
    return this.#queue.run(config.label, async () => {
      const provider = config.provider;
      const conditional = derived && isConditionalProvider(provider);
      for (let attempt = 0; ; attempt++) {
        let before: string | undefined;
        const current = async () => {
          before ??= conditional
            ? (await this.readNow(config)).content
            : (this.#cache.get(config.label) ?? (await this.readNow(config))).content;
          return before;
        };
        const content = await next(current);
        checkTokenLimit(config, this.#countTokens, "block", content);
        if (conditional) {
          const expected = await current();
          const written = await this.#calls.run(config.label, provider, () =>
            provider.setIf(expected, content, freshWrite(write)),
          );
          if (written !== true) {
            if (attempt < CONFLICT_RETRIES) continue;
            throw new ContextError(
              "CONFLICT",
              `Block "${config.label}" changed under ${CONFLICT_RETRIES + 1} attempts to write it (other writers); nothing was written`,
              { label: config.label },
            );
          }
        } else {
          await this.#calls.run(config.label, provider, () => provider.set(content, freshWrite(write)));
        }
        const block = this.#cache.build(config, content);
        if (this.#registry.has(config)) this.#cache.keep(block, true);
        return { ...block };
      }
    });
  }

  /**
   * Runs a keyed change (set, delete or edit one entry) in queue order, then re-reads the block. A
   * `ContextError` the change throws (an edit that does not apply) passes through unchanged.
   */
  changeEntry(config: KeyedConfig, change: () => Promise<void>): Promise<ContextBlock> {
    return this.#queue.run(config.label, async () => {
      await this.#calls.run(config.label, config.provider, change);
      return { ...(await this.readNow(config)) };
    });
  }
}
