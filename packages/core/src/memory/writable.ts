import type {
  BlockVersion,
  BlockWrite,
  ConditionalContextProvider,
  FingerprintedPrompt,
  FingerprintingPromptStore,
  VersionedProvider,
  VersionQuery,
} from "../types.js";
import { type InMemoryProviderOptions, InMemoryStore, requireText } from "./store.js";
import { checkRetention, listVersions, recordVersion } from "./version-list.js";

/** Options of `InMemoryContextProvider`. */
export interface InMemoryContextProviderOptions extends InMemoryProviderOptions {
  /** Content the block starts with when the store has none (not a version). */
  initial?: string;
  /** How many versions to keep (the newest). Default 50. */
  versionRetention?: number;
}

/**
 * A writable block kept in memory (or in a shared `InMemoryStore`). For tests and quick starts, and the
 * reference implementation of the `versions` capability (every write that changes the content is a version,
 * the newest `versionRetention` kept), of `setIf` (a conditional write) and, as a prompt store, of keeping
 * the configuration's fingerprint with the prompt (`getWithFingerprint`).
 */
export class InMemoryContextProvider
  implements VersionedProvider, ConditionalContextProvider, FingerprintingPromptStore
{
  readonly store: InMemoryStore;
  #label: string | undefined;
  readonly #initial: string | undefined;
  readonly #retention: number;

  constructor(options: InMemoryContextProviderOptions = {}) {
    this.store = options.store ?? new InMemoryStore();
    this.#label = options.label;
    this.#retention = checkRetention("InMemoryContextProvider", options.versionRetention);
    if (options.initial !== undefined && this.#label !== undefined && !this.store.blocks.has(this.#label)) {
      this.store.blocks.set(this.#label, options.initial);
    }
    this.#initial = options.initial;
  }

  init(label: string): void {
    if (this.#label !== undefined) return;
    this.#label = label;
    if (this.#initial !== undefined && !this.store.blocks.has(label))
      this.store.blocks.set(label, this.#initial);
  }

  async get(): Promise<string | null> {
    return this.store.blocks.get(this.#key()) ?? null;
  }

  /** The content with the fingerprint written with it (synchronously: the store is in memory). */
  getWithFingerprint(): FingerprintedPrompt | null {
    const key = this.#key();
    const content = this.store.blocks.get(key);
    if (content === undefined) return null;
    return { content, fingerprint: this.store.fingerprints.get(key) ?? null };
  }

  async set(content: string, write?: BlockWrite): Promise<void> {
    requireText("InMemoryContextProvider", "content", content);
    this.#write(content, write);
  }

  async setIf(expected: string, content: string, write?: BlockWrite): Promise<boolean> {
    requireText("InMemoryContextProvider", "expected", expected);
    requireText("InMemoryContextProvider", "content", content);
    if ((this.store.blocks.get(this.#key()) ?? "") !== expected) return false;
    this.#write(content, write);
    return true;
  }

  async versions(query: VersionQuery = {}): Promise<BlockVersion[]> {
    return listVersions(this.store.versions.get(this.#key()) ?? [], query);
  }

  #write(content: string, write: BlockWrite | undefined): void {
    const key = this.#key();
    // A write without a fingerprint forgets the one kept: it may not describe this content.
    if (write?.fingerprint === undefined) this.store.fingerprints.delete(key);
    else this.store.fingerprints.set(key, write.fingerprint);
    if (this.store.blocks.get(key) === content) return;
    this.store.blocks.set(key, content);
    let versions = this.store.versions.get(key);
    if (!versions) {
      versions = [];
      this.store.versions.set(key, versions);
    }
    recordVersion(versions, content, write, this.#retention);
  }

  #key(): string {
    return this.#label ?? "";
  }
}
