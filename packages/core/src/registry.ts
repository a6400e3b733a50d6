import {
  type BlockDefinition,
  blockDefinition,
  definitionGeneration,
  definitionHeader,
} from "./block-definition.js";
import { type ResolvedConfig, resolveConfig } from "./config.js";
import type { ExpectedHeader } from "./drift.js";
import { ContextError } from "./errors.js";
import { configurationFingerprint, foldHashes } from "./fingerprint.js";
import { headerTitle } from "./prompt-format.js";
import type { AnyContextProvider, ContextConfig } from "./types.js";

/** The last clash-check pass's mark (see `BlockRegistry.addAll`); each pass takes the next. */
let nextMark = 0;

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
  /** Each block's checked definition (its header names), in the same order as `configs`. */
  private readonly definitions: BlockDefinition[] = [];
  /**
   * Each block's header as drift detection compares it, in the same order as `configs`: made on first
   * use (a wake whose stored fingerprint matches never needs it) and again after a change.
   */
  private headers: ExpectedHeader[] | undefined;
  /**
   * Look-ups by label, upper-cased label and header title, built on the first look-up once there are more
   * than `SCAN_LIMIT` blocks: below that a scan of the arrays above is faster than hashing, and a cold start
   * (which looks nothing up) allocates no maps (see bench/src/latency.ts).
   */
  private index: RegistryIndex | undefined;
  /** The configuration's fingerprint (its headers' hashes folded), until the next change. */
  private fingerprint: string | undefined;

  constructor(
    private readonly defaultProvider: ((label: string) => AnyContextProvider) | undefined,
    private readonly reservedLabels: ReadonlySet<string>,
  ) {}

  /**
   * Registers the constructor's blocks, in order. The clash check marks each block's header names (shared
   * by every instance built from the same definitions, see `HeaderName`): a name already marked in this
   * pass is a clash. Only when the definition cache was cleared during the pass (its names are then not
   * shared) do the remaining blocks go through `add`'s look-ups.
   */
  addAll(configs: readonly ContextConfig[]): void {
    nextMark += 1;
    const mark = nextMark;
    const generation = definitionGeneration();
    for (const config of configs) {
      const definition = this.definitionOf(config);
      if (definitionGeneration() !== generation) {
        this.register(config, definition, true);
        continue;
      }
      const { upper, title } = definition;
      if (upper.mark === mark || title.mark === mark) this.register(config, definition, true);
      else this.register(config, definition, false);
      upper.mark = mark;
      title.mark = mark;
    }
  }

  add(config: ContextConfig): ResolvedConfig {
    return this.register(config, this.definitionOf(config), true);
  }

  private definitionOf(config: ContextConfig): BlockDefinition {
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
    return blockDefinition(config);
  }

  /** Resolves and registers one block; `checkClash` looks for a block with the same header names first. */
  private register(config: ContextConfig, definition: BlockDefinition, checkClash: boolean): ResolvedConfig {
    const resolved = resolveConfig(config, this.defaultProvider, definition);
    const upper = definition.upper.text;
    const title = definition.title.text;
    if (checkClash) {
      const clash = this.clashing(upper, title);
      if (clash !== undefined) this.refuseClash(resolved, clash);
    }
    this.configs.push(resolved);
    this.definitions.push(definition);
    this.headers = undefined;
    this.fingerprint = undefined;
    if (this.index !== undefined) this.index.put(resolved, upper, title);
    return resolved;
  }

  remove(label: string): ResolvedConfig | undefined {
    const index = this.configs.findIndex((config) => config.label === label);
    if (index === -1) return undefined;
    const [removed] = this.configs.splice(index, 1);
    const [definition] = this.definitions.splice(index, 1);
    this.headers = undefined;
    this.fingerprint = undefined;
    if (removed !== undefined && definition !== undefined && this.index !== undefined) {
      this.index.byUpperLabel.delete(definition.upper.text);
      this.index.byLabel.delete(removed.label);
      this.index.byTitle.delete(definition.title.text);
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
    const { definitions } = this;
    for (let at = 0; at < definitions.length; at += 1) {
      if (definitions[at]?.upper.text === upper) return this.configs[at];
    }
    for (let at = 0; at < definitions.length; at += 1) {
      if (definitions[at]?.title.text === title) return this.configs[at];
    }
    return undefined;
  }

  /** The look-up maps once there are more than `SCAN_LIMIT` blocks (built then, from the arrays). */
  private indexed(): RegistryIndex | undefined {
    if (this.index !== undefined || this.configs.length <= SCAN_LIMIT) return this.index;
    const index = new RegistryIndex();
    for (let at = 0; at < this.configs.length; at += 1) {
      const definition = this.definitions[at] as BlockDefinition;
      index.put(this.configs[at] as ResolvedConfig, definition.upper.text, definition.title.text);
    }
    this.index = index;
    return index;
  }

  all(): readonly ResolvedConfig[] {
    return this.configs;
  }

  /** The headers the blocks render, in prompt order, for drift detection (`findDrift`). */
  expectedHeaders(): readonly ExpectedHeader[] {
    this.headers ??= this.configs.map((config, at) =>
      definitionHeader(this.definitions[at] as BlockDefinition, config.kind),
    );
    return this.headers;
  }

  /** The configuration's fingerprint: its headers' hashes folded in order (see `promptFingerprint`). */
  configurationFingerprint(): string {
    // From each definition's cached header (not through `expectedHeaders`): a wake whose fingerprint
    // matches then keeps no array of expected headers.
    this.fingerprint ??= configurationFingerprint(
      foldHashes(
        this.headers?.map((header) => header.hash) ??
          this.configs.map(
            (config, at) => definitionHeader(this.definitions[at] as BlockDefinition, config.kind).hash,
          ),
      ),
    );
    return this.fingerprint;
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
