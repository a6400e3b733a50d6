import type { WritableContextProvider } from "../types.js";
import { type MemoryProviderOptions, MemoryStore, requireText } from "./store.js";

/** A writable block kept in memory (or in a shared `MemoryStore`). For tests and quick starts. */
export class MemoryContextProvider implements WritableContextProvider {
  readonly store: MemoryStore;
  private label: string | undefined;

  constructor(options: MemoryProviderOptions & { initial?: string } = {}) {
    this.store = options.store ?? new MemoryStore();
    this.label = options.label;
    if (options.initial !== undefined && this.label !== undefined && !this.store.blocks.has(this.label)) {
      this.store.blocks.set(this.label, options.initial);
    }
    this.initial = options.initial;
  }

  private readonly initial: string | undefined;

  init(label: string): void {
    if (this.label !== undefined) return;
    this.label = label;
    if (this.initial !== undefined && !this.store.blocks.has(label))
      this.store.blocks.set(label, this.initial);
  }

  async get(): Promise<string | null> {
    return this.store.blocks.get(this.key()) ?? null;
  }

  async set(content: string): Promise<void> {
    requireText("MemoryContextProvider", "content", content);
    this.store.blocks.set(this.key(), content);
  }

  private key(): string {
    return this.label ?? "";
  }
}
