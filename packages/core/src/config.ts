import { type BlockDefinition, blockDefinition } from "./block-definition.js";
import { acceptsWrites, blockKindOf, isReadableProvider } from "./capabilities.js";
import { ContextError } from "./errors.js";
import type {
  AnyContextProvider,
  ContextConfig,
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
 * Checks one config and fills in its provider; throws `INVALID_CONFIG` naming the problem. The checks of the
 * label, description, limit and `whenChanged` run once per definition (`blockDefinition`, cached); only the
 * provider's shape is read per instance.
 */
export function resolveConfig(
  config: ContextConfig,
  defaultProvider: ((label: string) => AnyContextProvider) | undefined,
  definition: BlockDefinition = blockDefinition(config),
): ResolvedConfig {
  const { label, description, maxTokens } = definition;
  const provider = config.provider ?? defaultProvider?.(label);
  // `blockKindOf` checked the methods each kind needs, so the provider has that kind's shape. The object is
  // written out field by field: object spread is slow in V8 (Node 20), and a cold start resolves every block.
  const kind = blockKindOf(provider);
  if (provider !== undefined && kind === "readonly" && !isReadableProvider(provider)) {
    throw new ContextError("INVALID_CONFIG", `Block "${label}": its provider has no get() method`, { label });
  }
  const resolved: Record<string, unknown> = { label };
  if (description) resolved.description = description;
  if (maxTokens !== undefined) resolved.maxTokens = maxTokens;
  resolved.whenChanged = definition.whenChanged;
  resolved.writable = kind === "writable" || (kind !== "readonly" && acceptsWrites(provider));
  resolved.kind = kind;
  if (provider !== undefined) resolved.provider = provider;
  return resolved as unknown as ResolvedConfig;
}
