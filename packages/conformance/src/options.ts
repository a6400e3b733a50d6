import type { ContextProvider } from "@contextblocks/core";

/**
 * What a provider can do, declared as data. The suite checks each declaration against the provider's shape
 * (function-valued methods) and runs, or shows as skipped, the groups that follow from it.
 */
export interface ConformanceCapabilities {
  /** `get()` resolves to the block's text or `null`. Every provider has it; `false` only skips the readable group. Default `true`. */
  readable?: boolean;
  /**
   * The provider has `set`. For a plain provider that is the whole-block `set(content)` (a writable block);
   * for a searchable or loadable one it is the keyed `set(key, content[, description])`.
   */
  writable?: boolean;
  /** The provider has `search(query)`: a searchable block. */
  searchable?: boolean;
  /** The provider has `load(key)`: a loadable block. */
  loadable?: boolean;
  /** The provider has `delete(key)` (searchable or loadable providers). */
  delete?: boolean;
  /** The provider can live in several namespaces on one backing store; needs the `namespace` option. */
  namespacing?: boolean;
  /**
   * The provider keeps block versions (`versions(query?)` beside a whole-block `set`): versions newest first,
   * restores as new versions, bounded retention (checked with the `versionRetention` option), no version for
   * a failed write, versions that survive a restart (with `reopen`). On a loadable block with `set`: entry
   * versions (`versions({ key })` beside `set(key, content, description?, write?)`), the same rules per key.
   */
  versions?: boolean;
}

/** A provider factory: a fresh, isolated provider (its own backing store) on every call. */
export type ProviderFactory<P> = () => P | Promise<P>;

export interface ConformanceOptions<P extends ContextProvider = ContextProvider> {
  /** What the provider can do. Checked against its shape by the capability group. */
  capabilities: ConformanceCapabilities;
  /** Releases one provider instance after its test: every instance the suite made, factory-made or reopened. */
  cleanup?(provider: P): void | Promise<void>;
  /**
   * A new provider instance on the same backing store as `provider` (a simulated restart). The suite calls
   * `init(label)` on it itself. Enables the durability, label-isolation and cold-start checks.
   */
  reopen?(provider: P): P | Promise<P>;
  /**
   * A provider on the same backing store as `provider` but in the namespace `namespace` (another tenant,
   * agent or table prefix). Required by `capabilities.namespacing`.
   */
  namespace?(provider: P, namespace: string): P | Promise<P>;
  /**
   * Puts `content` into the provider's block, for read-only providers that have no write method of their
   * own, so the label-isolation and rendering checks can run. Not used when the provider has `set`.
   */
  seed?(provider: P, content: string): void | Promise<void>;
  /**
   * How many versions the factory's providers keep (`capabilities.versions`). Enables the retention check;
   * keep it small (the check writes retention + 4 versions).
   */
  versionRetention?: number;
  /** Per-test timeout in milliseconds. Default: vitest's (`testTimeout`, 5 s unless configured). */
  timeout?: number;
  /** Characters in the "long content" round trip. Default 1,048,576 (1 MB of ASCII). */
  largeContentSize?: number;
  /** The most matches one `search()` may return. Default 10. */
  searchLimit?: number;
  /** How many writes the concurrency checks start at once: a whole number of at least 2. Default 8. */
  concurrentWrites?: number;
  /**
   * How many rounds each concurrency check runs, each on fresh providers with another scheduling (one tick,
   * microtasks, timers, seeded random delays): a whole number of at least 1. Default 16.
   */
  concurrencyRounds?: number;
}

export const DEFAULT_LARGE_CONTENT_SIZE = 1_048_576;
export const DEFAULT_SEARCH_LIMIT = 10;
export const DEFAULT_CONCURRENT_WRITES = 8;

/** `option` when it is a whole number of at least `minimum`; otherwise a TypeError that names it. */
export function wholeNumberOption(
  name: string,
  value: number | undefined,
  minimum: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum) {
    throw new TypeError(
      `conformance: \`${name}\` must be a whole number of at least ${minimum}, got ${String(value)}`,
    );
  }
  return value;
}

/** Capabilities with defaults filled in. */
export interface DeclaredCapabilities {
  readable: boolean;
  writable: boolean;
  searchable: boolean;
  loadable: boolean;
  delete: boolean;
  namespacing: boolean;
  versions: boolean;
}

export function declaredCapabilities(declared: ConformanceCapabilities | undefined): DeclaredCapabilities {
  declared ??= {};
  return {
    readable: declared.readable ?? true,
    writable: declared.writable ?? false,
    searchable: declared.searchable ?? false,
    loadable: declared.loadable ?? false,
    delete: declared.delete ?? false,
    namespacing: declared.namespacing ?? false,
    versions: declared.versions ?? false,
  };
}
