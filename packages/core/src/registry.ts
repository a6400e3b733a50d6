import {
  type BlockDefinition,
  blockDefinition,
  definitionGeneration,
  definitionHeader,
} from "./block-definition.js";
import { providerKind, type ResolvedConfig, resolvedConfig } from "./config.js";
import { clipped } from "./describe-value.js";
import type { ExpectedHeader } from "./drift.js";
import { ContextError } from "./errors.js";
import { configurationFingerprint, foldHashes, HashFold, type HashPair } from "./fingerprint.js";
import type { AnyContextProvider, BlockKind, ContextConfig } from "./types.js";
import {
  keepValidatedConfiguration,
  sameReservedLabels,
  type ValidatedConfiguration,
  validatedConfiguration,
} from "./validated-configurations.js";

/** The last clash-check pass's mark (see `BlockRegistry.addAll`); each pass takes the next. */
let nextMark = 0;

/** Up to this many blocks, look-ups scan arrays; past it, `RegistryIndex`'s maps answer them. */
const SCAN_LIMIT = 16;

/** The registry's look-ups by label, upper-cased label and header title, for many blocks. */
class RegistryIndex {
  readonly byLabel = new Map<string, ResolvedConfig>();
  readonly byUpperLabel = new Map<string, BlockDefinition>();
  readonly byTitle = new Map<string, BlockDefinition>();

  put(config: ResolvedConfig, definition: BlockDefinition): void {
    this.byUpperLabel.set(definition.upper.text, definition);
    this.byLabel.set(config.label, config);
    this.byTitle.set(definition.title.text, definition);
  }
}

/**
 * The configured blocks, in prompt order. Refuses a config whose header could be taken for another
 * block's: the same label, the same upper-cased label (headers are upper-cased), or the same header title
 * (`status` described `LIVE` and `status (live)` both render `STATUS (LIVE)`). Either would let one block
 * pass for the other in reminders, drift detection and prefix comparisons.
 *
 * A block is kept as its checked definition, its provider and its kind (three arrays in prompt order);
 * its `ResolvedConfig` is made on the first call that hands configs out. A wake (construct, then serve the
 * stored prompt when its fingerprint matches) makes none: it needs the definitions and kinds alone.
 */
export class BlockRegistry {
  /** Each block's checked definition (its header names), in prompt order. */
  #definitions: BlockDefinition[] = [];
  /** Each block's provider (its own, or the default provider's), in the same order. */
  #providers: (AnyContextProvider | undefined)[] = [];
  /** Each block's kind, from its provider's shape, in the same order. */
  #kinds: BlockKind[] = [];
  /** The resolved configs, in the same order: made on first use, then kept in step. */
  #configs: ResolvedConfig[] | undefined;
  /**
   * Each block's header as drift detection compares it, in the same order: made on first use (a wake
   * whose stored fingerprint matches never needs it) and again after a change.
   */
  #headers: ExpectedHeader[] | undefined;
  /**
   * Look-ups by label, upper-cased label and header title, built on the first look-up once there are more
   * than `SCAN_LIMIT` blocks: below that a scan of the arrays above is faster than hashing, and a cold start
   * (which looks nothing up) allocates no maps (see bench/src/latency.ts).
   */
  #index: RegistryIndex | undefined;
  /** The configuration's fingerprint (its headers' hashes folded), until the next change. */
  #fingerprint: string | undefined;
  /** The headers' hashes folded by `addAll` as it registered the blocks, until the next change. */
  #folded: HashPair | undefined;
  readonly #defaultProvider: ((label: string) => AnyContextProvider) | undefined;
  readonly #reservedLabels: ReadonlySet<string>;

  constructor(
    defaultProvider: ((label: string) => AnyContextProvider) | undefined,
    reservedLabels: ReadonlySet<string>,
  ) {
    this.#defaultProvider = defaultProvider;
    this.#reservedLabels = reservedLabels;
  }

  /**
   * Registers the constructor's blocks, in order. The clash check marks each block's header names (shared
   * by every instance built from the same definitions, see `HeaderName`): a name already marked in this
   * pass is a clash. Only when the definition cache was cleared during the pass (its names are then not
   * shared), or another pass ran inside this one (a default provider that builds a `ContextBlocks`), does
   * a block go through a scan of the blocks before it. Each block's header hash is folded into the
   * configuration's fingerprint on the way (a wake's drift check needs nothing else), so the blocks are
   * walked once while their definitions are at hand, into arrays made at their final length.
   *
   * A configuration that passed these checks is kept (`validated-configurations.ts`): a later construction
   * whose values are the same, in order, with providers of the same kinds and the same reserved labels,
   * takes its definitions, kinds and fingerprint after comparing the values alone. Any difference runs
   * every check above.
   */
  addAll(configs: readonly ContextConfig[]): void {
    if (this.#definitions.length > 0) {
      for (const config of configs) this.add(config);
      return;
    }
    const total = configs.length;
    // Filled in order: a provider asked for is kept, so no default provider is asked twice for a block.
    const providers: (AnyContextProvider | undefined)[] = [];
    const known = total > 0 ? validatedConfiguration(configs) : undefined;
    if (known !== undefined && sameReservedLabels(known, this.#reservedLabels)) {
      if (this.#matchesKnown(configs, known, providers)) {
        this.#definitions = known.definitions.slice();
        this.#providers = providers;
        this.#kinds = known.kinds.slice();
        this.#folded = known.folded;
        return;
      }
    }
    const definitions = new Array<BlockDefinition>(total);
    const kinds = new Array<BlockKind>(total);
    const fold = new HashFold(total);
    nextMark += 1;
    const mark = nextMark;
    const generation = definitionGeneration();
    for (let at = 0; at < total; at += 1) {
      const config = configs[at] as ContextConfig;
      const definition = this.#definitionOf(config);
      // A provider the comparison with a known configuration already asked the default provider for.
      const provider =
        at < providers.length
          ? providers[at]
          : (config.provider ?? this.#defaultProvider?.(definition.label));
      const kind = providerKind(provider, definition.label);
      const { upper, title } = definition;
      const shared = nextMark === mark && definitionGeneration() === generation;
      if (!shared || upper.mark === mark || title.mark === mark) {
        const other = clashIn(definitions, at, definition);
        if (other !== undefined) throwClash(definition, other);
      }
      upper.mark = mark;
      title.mark = mark;
      definitions[at] = definition;
      providers[at] = provider;
      kinds[at] = kind;
      fold.add(definitionHeader(definition, kind).hash);
    }
    this.#definitions = definitions;
    this.#providers = providers;
    this.#kinds = kinds;
    this.#folded = fold.result();
    keepValidatedConfiguration({
      definitions: definitions.slice(),
      kinds: kinds.slice(),
      reserved: [...this.#reservedLabels].sort(),
      folded: this.#folded,
    });
  }

  /**
   * Whether `configs` hold the values of a configuration that passed every check, in order, and their
   * providers its kinds: then its checked parts can be taken as they are. Each block's provider is resolved
   * on the way and pushed onto `providers`, up to the first difference.
   */
  #matchesKnown(
    configs: readonly ContextConfig[],
    known: ValidatedConfiguration,
    providers: (AnyContextProvider | undefined)[],
  ): boolean {
    const { definitions, kinds } = known;
    for (let at = 0; at < configs.length; at += 1) {
      const config = configs[at];
      if (typeof config !== "object" || config === null) return false;
      const label = config.label;
      // Same length as `configs` (the key holds it). The values as the checks read them (`input`).
      const { input, label: checked } = definitions[at] as BlockDefinition;
      if (
        label !== checked ||
        config.description !== input.description ||
        config.maxTokens !== input.maxTokens ||
        config.whenChanged !== input.whenChanged
      ) {
        return false;
      }
      const provider = config.provider ?? this.#defaultProvider?.(label);
      providers.push(provider);
      // Refuses a provider without get() as the full checks would (the blocks before it are all valid).
      if (providerKind(provider, label) !== kinds[at]) return false;
    }
    return true;
  }

  add(config: ContextConfig): ResolvedConfig {
    const definition = this.#definitionOf(config);
    const provider = config.provider ?? this.#defaultProvider?.(definition.label);
    const kind = providerKind(provider, definition.label);
    this.#refuseClash(definition);
    this.#push(definition, provider, kind);
    return this.all()[this.#definitions.length - 1] as ResolvedConfig;
  }

  #definitionOf(config: ContextConfig): BlockDefinition {
    const label = typeof config === "object" && config !== null ? config.label : undefined;
    if (typeof label === "string" && this.#reservedLabels.has(label)) {
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

  /** Appends one checked block (its clash check done). */
  #push(definition: BlockDefinition, provider: AnyContextProvider | undefined, kind: BlockKind): void {
    this.#definitions.push(definition);
    this.#providers.push(provider);
    this.#kinds.push(kind);
    if (this.#configs !== undefined) {
      const config = resolvedConfig(definition, provider, kind);
      this.#configs.push(config);
      this.#index?.put(config, definition);
    }
    this.#headers = undefined;
    this.#fingerprint = undefined;
    this.#folded = undefined;
  }

  remove(label: string): ResolvedConfig | undefined {
    const at = this.#definitions.findIndex((definition) => definition.label === label);
    if (at === -1) return undefined;
    const removed = this.all()[at];
    const [definition] = this.#definitions.splice(at, 1);
    this.#providers.splice(at, 1);
    this.#kinds.splice(at, 1);
    this.#configs?.splice(at, 1);
    this.#headers = undefined;
    this.#fingerprint = undefined;
    this.#folded = undefined;
    if (removed !== undefined && definition !== undefined && this.#index !== undefined) {
      this.#index.byUpperLabel.delete(definition.upper.text);
      this.#index.byLabel.delete(removed.label);
      this.#index.byTitle.delete(definition.title.text);
    }
    return removed;
  }

  find(label: string): ResolvedConfig | undefined {
    const index = this.#indexed();
    if (index !== undefined) return index.byLabel.get(label);
    const definitions = this.#definitions;
    for (let at = 0; at < definitions.length; at += 1) {
      if (definitions[at]?.label === label) return this.all()[at];
    }
    return undefined;
  }

  /** Whether this very config is still registered (a block removed while a call was in flight is not). */
  has(config: ResolvedConfig): boolean {
    return this.find(config.label) === config;
  }

  /** The block whose upper-cased label or header title is that of `definition`, if any. */
  #clashing(definition: BlockDefinition): BlockDefinition | undefined {
    const index = this.#indexed();
    if (index !== undefined) {
      return index.byUpperLabel.get(definition.upper.text) ?? index.byTitle.get(definition.title.text);
    }
    return clashIn(this.#definitions, this.#definitions.length, definition);
  }

  /** The look-up maps once there are more than `SCAN_LIMIT` blocks (built then, from the arrays). */
  #indexed(): RegistryIndex | undefined {
    if (this.#index !== undefined || this.#definitions.length <= SCAN_LIMIT) return this.#index;
    const configs = this.all();
    const index = new RegistryIndex();
    for (let at = 0; at < configs.length; at += 1) {
      index.put(configs[at] as ResolvedConfig, this.#definitions[at] as BlockDefinition);
    }
    this.#index = index;
    return index;
  }

  /** The resolved configs, in prompt order (made on the first call). */
  all(): readonly ResolvedConfig[] {
    if (this.#configs === undefined) {
      const configs: ResolvedConfig[] = [];
      for (let at = 0; at < this.#definitions.length; at += 1) {
        configs.push(
          resolvedConfig(
            this.#definitions[at] as BlockDefinition,
            this.#providers[at],
            this.#kinds[at] as BlockKind,
          ),
        );
      }
      this.#configs = configs;
    }
    return this.#configs;
  }

  /** The headers the blocks render, in prompt order, for drift detection (`findDrift`). */
  expectedHeaders(): readonly ExpectedHeader[] {
    this.#headers ??= this.#definitions.map((definition, at) =>
      definitionHeader(definition, this.#kinds[at] as BlockKind),
    );
    return this.#headers;
  }

  /** The configuration's fingerprint: its headers' hashes folded in order (see `promptFingerprint`). */
  configurationFingerprint(): string {
    // Folded by `addAll`, else from each definition's cached header (not through `expectedHeaders`): a
    // wake whose fingerprint matches then keeps no array of expected headers.
    this.#fingerprint ??= configurationFingerprint(
      this.#folded ??
        foldHashes(
          this.#headers?.map((header) => header.hash) ??
            this.#definitions.map(
              (definition, at) => definitionHeader(definition, this.#kinds[at] as BlockKind).hash,
            ),
        ),
    );
    return this.#fingerprint;
  }

  /** The config of `label`, or `NOT_FOUND` listing the labels there are. */
  require(label: string): ResolvedConfig {
    const config = this.find(label);
    if (config) return config;
    const known = this.#definitions.map((definition) => definition.label).join(", ") || "none";
    throw new ContextError("NOT_FOUND", `Block "${clipped(String(label))}" not found. Blocks: ${known}`, {
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

  /** Throws `INVALID_CONFIG` when a registered block would render the same header names as `definition`. */
  #refuseClash(definition: BlockDefinition): void {
    const other = this.#clashing(definition);
    if (other !== undefined) throwClash(definition, other);
  }
}

/** The first of `definitions[0, count)` with the same upper-cased label or header title as `definition`. */
function clashIn(
  definitions: readonly BlockDefinition[],
  count: number,
  definition: BlockDefinition,
): BlockDefinition | undefined {
  const upper = definition.upper.text;
  const title = definition.title.text;
  for (let at = 0; at < count; at += 1) if (definitions[at]?.upper.text === upper) return definitions[at];
  for (let at = 0; at < count; at += 1) if (definitions[at]?.title.text === title) return definitions[at];
  return undefined;
}

/** `INVALID_CONFIG` for `definition`, whose header names are those of `other`, saying which. */
function throwClash(definition: BlockDefinition, other: BlockDefinition): never {
  const { label } = definition;
  if (other.label === label) {
    throw new ContextError("INVALID_CONFIG", `Block "${label}" is declared twice`, { label });
  }
  if (other.upper.text === definition.upper.text) {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block "${label}" would render under the same header as block "${other.label}" (${definition.upper.text})`,
      { label },
    );
  }
  throw new ContextError(
    "INVALID_CONFIG",
    `Block "${label}" would render the same header title as block "${other.label}" (${definition.title.text}): change a label or a description`,
    { label },
  );
}
