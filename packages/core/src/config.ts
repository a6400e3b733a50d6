import type { BlockDefinition } from "./block-definition.js";
import { acceptsWrites, blockKindOf, isReadableProvider } from "./capabilities.js";
import { ContextError } from "./errors.js";
import type {
  AnyContextProvider,
  BlockKind,
  ContextProvider,
  SearchProvider,
  SkillProvider,
  WhenChanged,
  WritableContextProvider,
} from "./types.js";

interface ConfigFields {
  readonly label: string;
  readonly description?: string;
  readonly maxTokens?: number;
  readonly whenChanged: WhenChanged;
  /** Accepts writes: whole-block for writable, keyed for searchable and loadable providers with `set`. */
  readonly writable: boolean;
}

/**
 * A block config after validation and default-provider wiring, narrowed by kind: the provider's type
 * follows from `kind`, which is decided once from the provider's shape (see `blockKindOf`).
 */
export type ResolvedConfig =
  | (ConfigFields & { readonly kind: "readonly"; readonly provider?: ContextProvider })
  | (ConfigFields & { readonly kind: "writable"; readonly provider: WritableContextProvider })
  | (ConfigFields & { readonly kind: "searchable"; readonly provider: SearchProvider })
  | (ConfigFields & { readonly kind: "loadable"; readonly provider: SkillProvider });

/**
 * The kind of a block whose provider is `provider`, from its shape (see `blockKindOf`); throws
 * `INVALID_CONFIG` for a provider without `get()`. The per-instance part of checking a config: the label,
 * description, limit and `whenChanged` are checked once per definition (`blockDefinition`, cached).
 */
export function providerKind(provider: AnyContextProvider | undefined, label: string): BlockKind {
  const kind = blockKindOf(provider);
  if (provider !== undefined && kind === "readonly" && !isReadableProvider(provider)) {
    throw new ContextError("INVALID_CONFIG", `Block "${label}": its provider has no get() method`, { label });
  }
  return kind;
}

/**
 * The resolved config of a checked definition, its provider and the kind `providerKind` gave. The registry
 * makes these on first use, not on construction: a wake that serves the stored prompt needs none.
 */
export function resolvedConfig(
  definition: BlockDefinition,
  provider: AnyContextProvider | undefined,
  kind: BlockKind,
): ResolvedConfig {
  const { label, description, maxTokens } = definition;
  // `providerKind` checked the methods each kind needs, so the provider has that kind's shape. The object is
  // written out field by field: object spread is slow in V8 (Node 20).
  const resolved: Record<string, unknown> = { label };
  if (description) resolved.description = description;
  if (maxTokens !== undefined) resolved.maxTokens = maxTokens;
  resolved.whenChanged = definition.whenChanged;
  resolved.writable = kind === "writable" || (kind !== "readonly" && acceptsWrites(provider));
  resolved.kind = kind;
  if (provider !== undefined) resolved.provider = provider;
  return resolved as unknown as ResolvedConfig;
}
