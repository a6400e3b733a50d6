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
  private readonly loaded = new Map<string, LoadedEntry>();

  add(entry: LoadedEntry): void {
    const id = entryId(entry);
    this.loaded.delete(id);
    this.loaded.set(id, { label: entry.label, key: entry.key });
  }

  /** False when the entry was not loaded. */
  remove(entry: LoadedEntry): boolean {
    return this.loaded.delete(entryId(entry));
  }

  has(entry: LoadedEntry): boolean {
    return this.loaded.has(entryId(entry));
  }

  removeBlock(label: string): void {
    for (const [id, entry] of this.loaded) if (entry.label === label) this.loaded.delete(id);
  }

  list(): LoadedEntry[] {
    return [...this.loaded.values()].map((entry) => ({ ...entry }));
  }
}
