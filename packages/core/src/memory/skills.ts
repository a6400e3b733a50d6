import { entryId } from "../entries.js";
import type { BlockVersion, BlockWrite, EntryVersionQuery, VersionedSkillProvider } from "../types.js";
import { type InMemoryEntry, type InMemoryProviderOptions, InMemoryStore, requireText } from "./store.js";
import { checkRetention, listVersions, recordVersion } from "./version-list.js";

/** Options of `InMemorySkillProvider`. */
export interface InMemorySkillProviderOptions extends InMemoryProviderOptions {
  /** Entries the block starts with when the store has none under their keys (not versions). */
  skills?: Record<string, InMemoryEntry>;
  /** How many versions to keep per entry (the newest). Default 50. */
  versionRetention?: number;
}

/**
 * A loadable block (skills) kept in memory. `get()` lists one entry per line, `- key: description`;
 * `load(key)` returns the entry's full text. For tests and quick starts, and the reference implementation
 * of entry versions (`versions({ key })`): every `set` that changes an entry's content is a version of it,
 * the newest `versionRetention` kept per key; a deleted entry keeps its versions.
 */
export class InMemorySkillProvider implements VersionedSkillProvider {
  readonly store: InMemoryStore;
  #label: string | undefined;
  readonly #seed: Record<string, InMemoryEntry> | undefined;
  readonly #retention: number;

  constructor(options: InMemorySkillProviderOptions = {}) {
    this.store = options.store ?? new InMemoryStore();
    this.#label = options.label;
    this.#seed = options.skills;
    this.#retention = checkRetention("InMemorySkillProvider", options.versionRetention);
    if (this.#label !== undefined) this.#plant();
  }

  init(label: string): void {
    if (this.#label !== undefined) return;
    this.#label = label;
    this.#plant();
  }

  async get(): Promise<string | null> {
    const lines = [...this.#entries()].map(([key, entry]) =>
      entry.description ? `- ${key}: ${entry.description}` : `- ${key}`,
    );
    return lines.length === 0 ? null : lines.join("\n");
  }

  async load(key: string): Promise<string | null> {
    return this.#entries().get(key)?.content ?? null;
  }

  async set(key: string, content: string, description?: string, write?: BlockWrite): Promise<void> {
    requireText("InMemorySkillProvider", "key", key);
    requireText("InMemorySkillProvider", "content", content);
    if (description !== undefined) requireText("InMemorySkillProvider", "description", description);
    const previous = this.#entries().get(key);
    const kept = description ?? previous?.description;
    this.#entries().set(key, kept === undefined ? { content } : { content, description: kept });
    // A version when the content differs from the newest version kept (as the SQL skill stores decide).
    const versions = this.#versionsOf(key);
    if (versions.at(-1)?.content !== content) recordVersion(versions, content, write, this.#retention);
  }

  async delete(key: string): Promise<void> {
    this.#entries().delete(key);
  }

  async versions(query: EntryVersionQuery): Promise<BlockVersion[]> {
    requireText("InMemorySkillProvider", "key", query?.key);
    return listVersions(this.store.entryVersions.get(this.#entryId(query.key)) ?? [], query);
  }

  #versionsOf(key: string): BlockVersion[] {
    const id = this.#entryId(key);
    let versions = this.store.entryVersions.get(id);
    if (!versions) {
      versions = [];
      this.store.entryVersions.set(id, versions);
    }
    return versions;
  }

  #entryId(key: string): string {
    return entryId({ label: this.#label ?? "", key });
  }

  #plant(): void {
    const entries = this.#entries();
    for (const [key, entry] of Object.entries(this.#seed ?? {}))
      if (!entries.has(key)) entries.set(key, { ...entry });
  }

  #entries() {
    return this.store.entriesOf(this.#label ?? "");
  }
}
