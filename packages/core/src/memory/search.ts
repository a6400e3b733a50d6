import type { SearchProvider } from "../types.js";
import { type InMemoryProviderOptions, InMemoryStore, requireText } from "./store.js";
import { rank } from "./text-search.js";

/**
 * A searchable block kept in memory: keyed entries, ranked any-word search (see `text-search.ts`).
 * `get()` is `"N entries indexed."`, or `null` when empty. For tests and quick starts.
 */
export class InMemorySearchProvider implements SearchProvider {
  readonly store: InMemoryStore;
  #label: string | undefined;
  readonly #limit: number;

  constructor(options: InMemoryProviderOptions & { limit?: number } = {}) {
    this.store = options.store ?? new InMemoryStore();
    this.#label = options.label;
    this.#limit = options.limit ?? 10;
  }

  init(label: string): void {
    this.#label ??= label;
  }

  async get(): Promise<string | null> {
    const count = this.#entries().size;
    return count === 0 ? null : `${count} entries indexed.`;
  }

  async search(query: string): Promise<string | null> {
    if (typeof query !== "string") return null;
    const documents = [...this.#entries()].map(([key, entry]) => ({ key, content: entry.content }));
    const matches = rank(documents, query, this.#limit);
    if (matches.length === 0) return null;
    return matches.map((match) => `[${match.key}]\n${match.content}`).join("\n\n");
  }

  async set(key: string, content: string): Promise<void> {
    requireText("InMemorySearchProvider", "key", key);
    requireText("InMemorySearchProvider", "content", content);
    this.#entries().set(key, { content });
  }

  async delete(key: string): Promise<void> {
    this.#entries().delete(key);
  }

  #entries() {
    return this.store.entriesOf(this.#label ?? "");
  }
}
