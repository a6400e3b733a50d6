import { type ResolvedConfig, resolveConfig } from "./config.js";
import { type ExpectedHeader, expectedHeader } from "./drift.js";
import { ContextError } from "./errors.js";
import { headerTitle } from "./prompt-format.js";
import type { AnyContextProvider, ContextConfig } from "./types.js";

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
  private readonly byLabel = new Map<string, ResolvedConfig>();
  private readonly byUpperLabel = new Map<string, ResolvedConfig>();
  private readonly byTitle = new Map<string, ResolvedConfig>();

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
    const title = headerTitle(resolved);
    const byUpper = this.byUpperLabel.get(upper);
    if (byUpper !== undefined) this.refuseClash(resolved, byUpper);
    const byTitle = this.byTitle.get(title);
    if (byTitle !== undefined) this.refuseClash(resolved, byTitle);
    this.configs.push(resolved);
    this.headers.push(expectedHeader(resolved, title));
    this.byUpperLabel.set(upper, resolved);
    this.byLabel.set(resolved.label, resolved);
    this.byTitle.set(title, resolved);
    return resolved;
  }

  remove(label: string): ResolvedConfig | undefined {
    const index = this.configs.findIndex((config) => config.label === label);
    if (index === -1) return undefined;
    const [removed] = this.configs.splice(index, 1);
    this.headers.splice(index, 1);
    if (removed !== undefined) {
      this.byUpperLabel.delete(removed.label.toUpperCase());
      this.byLabel.delete(removed.label);
      this.byTitle.delete(headerTitle(removed));
    }
    return removed;
  }

  find(label: string): ResolvedConfig | undefined {
    return this.byLabel.get(label);
  }

  /** Whether this very config is still registered (a block removed while a call was in flight is not). */
  has(config: ResolvedConfig): boolean {
    return this.byLabel.get(config.label) === config;
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
