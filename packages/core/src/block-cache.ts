import type { ResolvedConfig } from "./config.js";
import type { TokenCounter } from "./tokens.js";
import type { ContextBlock } from "./types.js";

/**
 * The blocks as last read or written, with their token counts. A count is reused while a block's content
 * is unchanged, so re-reads and reminders do not count again.
 */
export class BlockCache {
  /** Made on the first block kept: a wake that serves the stored prompt reads no block and makes none. */
  #blocks: Map<string, ContextBlock> | undefined;
  /** Blocks whose content comes from this instance's own write, not from a read (made on the first write). */
  #written: Set<string> | undefined;

  constructor(private readonly countTokens: TokenCounter) {}

  get(label: string): ContextBlock | undefined {
    return this.#blocks?.get(label);
  }

  /** The block `config` has with `content`, counted (or the memo reused). Not kept: see `keep`. */
  build(config: ResolvedConfig, content: string): ContextBlock {
    const previous = this.#blocks?.get(config.label);
    const tokens =
      previous !== undefined && previous.content === content ? previous.tokens : this.countTokens(content);
    // Field by field, not with object spread (slow in V8 on Node 20): every read of every block builds one.
    const block = { label: config.label } as ContextBlock;
    if (config.description !== undefined) block.description = config.description;
    block.content = content;
    block.tokens = tokens;
    if (config.maxTokens !== undefined) block.maxTokens = config.maxTokens;
    block.kind = config.kind;
    block.whenChanged = config.whenChanged;
    block.writable = config.writable;
    block.isSearchable = config.kind === "searchable";
    block.isSkill = config.kind === "loadable";
    return block;
  }

  /** Keeps a block; `fromWrite` marks content this instance wrote itself (it needs no re-read to freeze). */
  keep(block: ContextBlock, fromWrite: boolean): void {
    this.#blocks ??= new Map();
    this.#blocks.set(block.label, block);
    if (fromWrite) {
      this.#written ??= new Set();
      this.#written.add(block.label);
    } else this.#written?.delete(block.label);
  }

  wroteItself(label: string): boolean {
    return this.#written?.has(label) ?? false;
  }

  forget(label: string): void {
    this.#blocks?.delete(label);
    this.#written?.delete(label);
  }
}
