/** One keyed entry of a search or skill block. */
export interface MemoryEntry {
  content: string;
  description?: string;
}

/**
 * The backing store of the in-memory providers. Share one between provider instances to simulate a
 * durable store across restarts: a new provider on the same store sees what an earlier one wrote.
 */
export class MemoryStore {
  readonly blocks = new Map<string, string>();
  readonly entries = new Map<string, Map<string, MemoryEntry>>();

  entriesOf(label: string): Map<string, MemoryEntry> {
    let entries = this.entries.get(label);
    if (!entries) {
      entries = new Map();
      this.entries.set(label, entries);
    }
    return entries;
  }
}

/** Shared option shape: an explicit label wins over `init(label)`. */
export interface MemoryProviderOptions {
  store?: MemoryStore;
  label?: string;
}

export function requireText(provider: string, field: string, value: unknown): asserts value is string {
  if (typeof value !== "string") {
    throw new TypeError(
      `${provider}: ${field} must be a string, got ${value === null ? "null" : typeof value}`,
    );
  }
}
