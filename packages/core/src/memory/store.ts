import type { BlockVersion } from "../types.js";

/** One keyed entry of a search or skill block. */
export interface InMemoryEntry {
  content: string;
  description?: string;
}

/**
 * The backing store of the in-memory providers. Share one between provider instances to simulate a
 * durable store across restarts: a new provider on the same store sees what an earlier one wrote.
 */
export class InMemoryStore {
  readonly blocks = new Map<string, string>();
  /** Versions of each writable block, oldest first (see `InMemoryContextProvider`'s `history`). */
  readonly versions = new Map<string, BlockVersion[]>();
  /** The configuration fingerprint written with a frozen prompt, by label (see `getWithFingerprint`). */
  readonly fingerprints = new Map<string, string>();
  readonly entries = new Map<string, Map<string, InMemoryEntry>>();
  /** Versions of each skill entry, oldest first, by `entryId({ label, key })` (see `InMemorySkillProvider`). */
  readonly entryVersions = new Map<string, BlockVersion[]>();

  entriesOf(label: string): Map<string, InMemoryEntry> {
    let entries = this.entries.get(label);
    if (!entries) {
      entries = new Map();
      this.entries.set(label, entries);
    }
    return entries;
  }
}

/** Shared option shape: an explicit label wins over `init(label)`. */
export interface InMemoryProviderOptions {
  store?: InMemoryStore;
  label?: string;
}

export function requireText(provider: string, field: string, value: unknown): asserts value is string {
  if (typeof value !== "string") {
    throw new Error(`${provider}: ${field} must be a string, got ${value === null ? "null" : typeof value}`);
  }
}
