import type { WritableContextProvider } from "../types.js";
import { type InMemoryProviderOptions, InMemoryStore, requireText } from "./store.js";

/** A writable block kept in memory (or in a shared `InMemoryStore`). For tests and quick starts. */
export class InMemoryContextProvider implements WritableContextProvider {
  readonly store: InMemoryStore;
  private label: string | undefined;

  constructor(options: InMemoryProviderOptions & { initial?: string } = {}) {
    this.store = options.store ?? new InMemoryStore();
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
    requireText("InMemoryContextProvider", "content", content);
    this.store.blocks.set(this.key(), content);
  }

  private key(): string {
    return this.label ?? "";
  }
}
