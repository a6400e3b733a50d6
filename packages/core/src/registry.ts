import { type ResolvedConfig, resolveConfig } from "./config.js";
import { type ExpectedHeader, expectedHeader } from "./drift.js";
import { ContextError } from "./errors.js";
import { headerTitle } from "./prompt-format.js";
import type { AnyContextProvider, ContextConfig } from "./types.js";

/** Up to this many blocks, look-ups scan arrays; past it, `RegistryIndex`'s maps answer them. */
const SCAN_LIMIT = 16;

/** The registry's look-ups by label, upper-cased label and header title, for many blocks. */
class RegistryIndex {
  readonly byLabel = new Map<string, ResolvedConfig>();
  readonly byUpperLabel = new Map<string, ResolvedConfig>();
  readonly byTitle = new Map<string, ResolvedConfig>();

  put(config: ResolvedConfig, upper: string, title: string): void {
    this.byUpperLabel.set(upper, config);
    this.byLabel.set(config.label, config);
    this.byTitle.set(title, config);
  }
}

/**
 * The configured blocks, in prompt order. Refuses a config whose header could be taken for another
 * block's: the same label, the same upper-cased label (headers are upper-cased), or the same header title
 * (`status` described `LIVE` and `status (live)` both render `STATUS (LIVE)`). Either would let one block
 * pass for the other in reminders, drift detection and prefix comparisons.
 */
export class BlockRegistry {
  private readonly configs: ResolvedConfig[] = [];
  /** Each block's header as drift detection compares it, in the same order as `configs`. */
  private readonly headers: ExpectedHeader[] = [];
  /** Each block's upper-cased label and header title, in the same order as `configs`. */
  private readonly uppers: string[] = [];
  private readonly titles: string[] = [];
  /**
   * Look-ups by label, upper-cased label and header title, built only once there are more than
   * `SCAN_LIMIT` blocks: below that a scan of the arrays above is faster than hashing, and a cold start
   * allocates no maps (see bench/src/latency.ts).
   */
  private index: RegistryIndex | undefined;

  constructor(
    private readonly defaultProvider: ((label: string) => AnyContextProvider) | undefined,
    private readonly reservedLabels: ReadonlySet<string>,
  ) {}

  add(config: ContextConfig): ResolvedConfig {
    const label = typeof config === "object" && config !== null ? config.label : undefined;
    if (typeof label === "string" && this.reservedLabels.has(label)) {
      throw new ContextError(
        "INVALID_CONFIG",
        `Block label "${label}" is reserved: the prompt store uses it`,
        {
          label,
        },
      );
    }
    const resolved = resolveConfig(config, this.defaultProvider);
    // Each block's upper-cased label and header title are kept, so a clash is found in one look-up each
    // (a cold start with many blocks would otherwise compare every pair).
    const upper = resolved.label.toUpperCase();
    const header = expectedHeader(
      resolved,
      resolved.description ? `${upper} (${resolved.description})` : upper,
    );
    // The header's title is the same text, held flat: the clash scan compares it with every other title.
    const title = header.shape.title;
    const clash = this.clashing(upper, title);
    if (clash !== undefined) this.refuseClash(resolved, clash);
    this.configs.push(resolved);
    this.headers.push(header);
    this.uppers.push(upper);
    this.titles.push(title);
    const index = this.indexed();
    if (index !== undefined) index.put(resolved, upper, title);
    return resolved;
  }

  remove(label: string): ResolvedConfig | undefined {
    const index = this.configs.findIndex((config) => config.label === label);
    if (index === -1) return undefined;
    const [removed] = this.configs.splice(index, 1);
    this.headers.splice(index, 1);
    const [upper] = this.uppers.splice(index, 1);
    const [title] = this.titles.splice(index, 1);
    if (removed !== undefined && this.index !== undefined) {
      this.index.byUpperLabel.delete(upper as string);
      this.index.byLabel.delete(removed.label);
      this.index.byTitle.delete(title as string);
    }
    return removed;
  }

  find(label: string): ResolvedConfig | undefined {
    const index = this.indexed();
    if (index !== undefined) return index.byLabel.get(label);
    for (const config of this.configs) if (config.label === label) return config;
    return undefined;
  }

  /** Whether this very config is still registered (a block removed while a call was in flight is not). */
  has(config: ResolvedConfig): boolean {
    return this.find(config.label) === config;
  }

  /** The block whose upper-cased label or header title is `upper` or `title`, if any. */
  private clashing(upper: string, title: string): ResolvedConfig | undefined {
    const index = this.indexed();
    if (index !== undefined) return index.byUpperLabel.get(upper) ?? index.byTitle.get(title);
    const { uppers, titles } = this;
    for (let at = 0; at < uppers.length; at += 1) {
      if (uppers[at] === upper) return this.configs[at];
    }
    for (let at = 0; at < titles.length; at += 1) {
      if (titles[at] === title) return this.configs[at];
    }
    return undefined;
  }

  /** The look-up maps once there are more than `SCAN_LIMIT` blocks (built then, from the arrays). */
  private indexed(): RegistryIndex | undefined {
    if (this.index !== undefined || this.configs.length <= SCAN_LIMIT) return this.index;
    const index = new RegistryIndex();
    for (let at = 0; at < this.configs.length; at += 1) {
      index.put(this.configs[at] as ResolvedConfig, this.uppers[at] as string, this.titles[at] as string);
    }
    this.index = index;
    return index;
  }

  all(): readonly ResolvedConfig[] {
    return this.configs;
  }

  /** The headers the blocks render, in prompt order, for drift detection (`findDrift`). */
  expectedHeaders(): readonly ExpectedHeader[] {
    return this.headers;
  }

  /** The config of `label`, or `NOT_FOUND` listing the labels there are. */
  require(label: string): ResolvedConfig {
    const config = this.find(label);
    if (config) return config;
    const known = this.configs.map((candidate) => candidate.label).join(", ") || "none";
    throw new ContextError("NOT_FOUND", `Block "${String(label)}" not found. Blocks: ${known}`, {
      label: String(label),
    });
  }

  /** The config of a plain writable block, or `KEYED_BLOCK` / `READONLY` saying what it is instead. */
  requireWritable(label: string): Extract<ResolvedConfig, { kind: "writable" }> {
    const config = this.require(label);
    if (config.kind === "searchable" || config.kind === "loadable") {
      throw new ContextError(
        "KEYED_BLOCK",
        `Block "${label}" is ${config.kind} and holds keyed entries: write one entry with setEntry(label, key, content)`,
        { label },
      );
    }
    if (config.kind !== "writable")
      throw new ContextError("READONLY", `Block "${label}" is readonly`, { label });
    return config;
  }

  /** The config of a keyed (searchable or loadable) block, or `READONLY` / `KEYED_BLOCK`. */
  requireKeyed(label: string): Extract<ResolvedConfig, { kind: "searchable" | "loadable" }> {
    const config = this.require(label);
    if (config.kind === "readonly")
      throw new ContextError("READONLY", `Block "${label}" is readonly`, { label });
    if (config.kind === "writable") {
      throw new ContextError(
        "KEYED_BLOCK",
        `Block "${label}" is a plain writable block: use setBlock(label, content)`,
        { label },
      );
    }
    return config;
  }

  private refuseClash(config: ResolvedConfig, other: ResolvedConfig): void {
    const { label } = config;
    if (other.label === label) {
      throw new ContextError("INVALID_CONFIG", `Block "${label}" is declared twice`, { label });
    }
    if (other.label.toUpperCase() === label.toUpperCase()) {
      throw new ContextError(
        "INVALID_CONFIG",
        `Block "${label}" would render under the same header as block "${other.label}" (${label.toUpperCase()})`,
        { label },
      );
    }
    const title = headerTitle(config);
    if (headerTitle(other) === title) {
      throw new ContextError(
        "INVALID_CONFIG",
        `Block "${label}" would render the same header title as block "${other.label}" (${title}): change a label or a description`,
        { label },
      );
    }
  }
}
