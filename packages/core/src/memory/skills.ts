import type { SkillProvider } from "../types.js";
import { type InMemoryEntry, type InMemoryProviderOptions, InMemoryStore, requireText } from "./store.js";

/**
 * A loadable block (skills) kept in memory. `get()` lists one entry per line, `- key: description`;
 * `load(key)` returns the entry's full text. For tests and quick starts.
 */
export class InMemorySkillProvider implements SkillProvider {
  readonly store: InMemoryStore;
  private label: string | undefined;
  private readonly seed: Record<string, InMemoryEntry> | undefined;

  constructor(options: InMemoryProviderOptions & { skills?: Record<string, InMemoryEntry> } = {}) {
    this.store = options.store ?? new InMemoryStore();
    this.label = options.label;
    this.seed = options.skills;
    if (this.label !== undefined) this.plant();
  }

  init(label: string): void {
    if (this.label !== undefined) return;
    this.label = label;
    this.plant();
  }

  async get(): Promise<string | null> {
    const lines = [...this.entries()].map(([key, entry]) =>
      entry.description ? `- ${key}: ${entry.description}` : `- ${key}`,
    );
    return lines.length === 0 ? null : lines.join("\n");
  }

  async load(key: string): Promise<string | null> {
    return this.entries().get(key)?.content ?? null;
  }

  async set(key: string, content: string, description?: string): Promise<void> {
    requireText("InMemorySkillProvider", "key", key);
    requireText("InMemorySkillProvider", "content", content);
    const previous = this.entries().get(key);
    const kept = description ?? previous?.description;
    this.entries().set(key, kept === undefined ? { content } : { content, description: kept });
  }

  async delete(key: string): Promise<void> {
    this.entries().delete(key);
  }

  private plant(): void {
    const entries = this.entries();
    for (const [key, entry] of Object.entries(this.seed ?? {}))
      if (!entries.has(key)) entries.set(key, { ...entry });
  }

  private entries() {
    return this.store.entriesOf(this.label ?? "");
  }
}
