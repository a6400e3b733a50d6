import type { ResolvedConfig } from "./config.js";
import type { TokenCounter } from "./tokens.js";
import type { ContextBlock } from "./types.js";

/**
 * The blocks as last read or written, with their token counts. A count is reused while a block's content
 * is unchanged, so re-reads and reminders do not count again.
 */
export class BlockCache {
  private readonly blocks = new Map<string, ContextBlock>();
  /** Blocks whose content comes from this instance's own write, not from a read. */
  private readonly written = new Set<string>();

  constructor(private readonly countTokens: TokenCounter) {}

  get(label: string): ContextBlock | undefined {
    return this.blocks.get(label);
  }

  /** The block `config` has with `content`, counted (or the memo reused). Not kept: see `keep`. */
  build(config: ResolvedConfig, content: string): ContextBlock {
    const previous = this.blocks.get(config.label);
    const tokens =
      previous !== undefined && previous.content === content ? previous.tokens : this.countTokens(content);
    return {
      label: config.label,
      ...(config.description !== undefined ? { description: config.description } : {}),
      content,
      tokens,
      ...(config.maxTokens !== undefined ? { maxTokens: config.maxTokens } : {}),
      kind: config.kind,
      whenChanged: config.whenChanged,
      writable: config.writable,
      isSearchable: config.kind === "searchable",
      isSkill: config.kind === "loadable",
    };
  }

  /** Keeps a block; `fromWrite` marks content this instance wrote itself (it needs no re-read to freeze). */
  keep(block: ContextBlock, fromWrite: boolean): void {
    this.blocks.set(block.label, block);
    if (fromWrite) this.written.add(block.label);
    else this.written.delete(block.label);
  }

  wroteItself(label: string): boolean {
    return this.written.has(label);
  }

  forget(label: string): void {
    this.blocks.delete(label);
    this.written.delete(label);
  }
}
