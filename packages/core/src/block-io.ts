import type { BlockCache } from "./block-cache.js";
import type { BlockQueue } from "./block-queue.js";
import type { ResolvedConfig } from "./config.js";
import { describeValue } from "./describe-value.js";
import { ContextError } from "./errors.js";
import { checkTokenLimit } from "./limits.js";
import type { ProviderCalls } from "./provider-calls.js";
import type { BlockRegistry } from "./registry.js";
import type { TokenCounter } from "./tokens.js";
import type { ContextBlock } from "./types.js";

type WritableConfig = Extract<ResolvedConfig, { kind: "writable" }>;
type KeyedConfig = Extract<ResolvedConfig, { kind: "searchable" | "loadable" }>;

/**
 * Reads and writes of blocks. Every read and write of one block runs in that block's queue, so a read
 * that started before a write can never replace what the write produced (`readQueued`); work already in
 * the queue uses `readNow`.
 */
export class BlockIO {
  constructor(
    private readonly registry: BlockRegistry,
    private readonly cache: BlockCache,
    private readonly queue: BlockQueue,
    private readonly calls: ProviderCalls,
    private readonly countTokens: TokenCounter,
  ) {}

  /** Reads a block in its turn after the reads and writes called before it. */
  readQueued(config: ResolvedConfig): Promise<ContextBlock> {
    return this.queue.run(config.label, () => this.readNow(config));
  }

  /** Reads a block from its provider now and keeps the result. Only from inside the block's queue. */
  async readNow(config: ResolvedConfig): Promise<ContextBlock> {
    const provider = config.provider;
    // `undefined` reads as "no content", as agents/context reads it: a JS provider may forget the `null`.
    const value = provider
      ? ((await this.calls.run(config.label, provider, () => provider.get())) ?? null)
      : null;
    if (value !== null && typeof value !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `Block "${config.label}": its provider's get() returned ${describeValue(value)}, not a string or null`,
        { label: config.label },
      );
    }
    const block = this.cache.build(config, value ?? "");
    // A block removed while its read was in flight stays removed.
    if (this.registry.has(config)) this.cache.keep(block, false);
    return block;
  }

  /** Replaces a writable block's content; `next` computes it from the current content, in queue order. */
  write(config: WritableConfig, next: (current: () => Promise<string>) => Promise<string>) {
    return this.queue.run(config.label, async () => {
      const content = await next(
        async () => (this.cache.get(config.label) ?? (await this.readNow(config))).content,
      );
      checkTokenLimit(config, this.countTokens, "block", content);
      const provider = config.provider;
      await this.calls.run(config.label, provider, () => provider.set(content));
      const block = this.cache.build(config, content);
      if (this.registry.has(config)) this.cache.keep(block, true);
      return { ...block };
    });
  }

  /** Runs a keyed change (set or delete one entry) in queue order, then re-reads the block. */
  changeEntry(config: KeyedConfig, change: () => Promise<void>): Promise<ContextBlock> {
    return this.queue.run(config.label, async () => {
      await this.calls.run(config.label, config.provider, change);
      return { ...(await this.readNow(config)) };
    });
  }
}
