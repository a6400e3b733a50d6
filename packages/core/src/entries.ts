/** An entry brought into the conversation by `load_context`. */
export interface LoadedEntry {
  label: string;
  key: string;
}

/** The one identity of a keyed entry: its block label and its key. */
export function entryId(entry: LoadedEntry): string {
  return JSON.stringify([entry.label, entry.key]);
}

/** The entries loaded in this instance and not unloaded since, in load order. */
export class LoadedEntries {
  /** Made on the first load: an instance without loadable blocks never allocates it. */
  #loaded: Map<string, LoadedEntry> | undefined;

  add(entry: LoadedEntry): void {
    const id = entryId(entry);
    this.#loaded ??= new Map();
    this.#loaded.delete(id);
    this.#loaded.set(id, { label: entry.label, key: entry.key });
  }

  /** False when the entry was not loaded. */
  remove(entry: LoadedEntry): boolean {
    return this.#loaded?.delete(entryId(entry)) ?? false;
  }

  has(entry: LoadedEntry): boolean {
    return this.#loaded?.has(entryId(entry)) ?? false;
  }

  removeBlock(label: string): void {
    const loaded = this.#loaded;
    if (loaded === undefined) return;
    for (const [id, entry] of loaded) if (entry.label === label) loaded.delete(id);
  }

  list(): LoadedEntry[] {
    const loaded = this.#loaded;
    if (loaded === undefined) return [];
    return [...loaded.values()].map((entry) => ({ ...entry }));
  }
}
