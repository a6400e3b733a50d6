import type {
  AnyContextProvider,
  BlockKind,
  ConditionalContextProvider,
  SearchProvider,
  SkillProvider,
  VersionedProvider,
  VersionedSkillProvider,
  WritableContextProvider,
} from "./types.js";

/** True when `value` is an object with a function under `name` (own or inherited, as methods are). */
export function hasMethod(value: unknown, name: string): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<string, unknown>)[name] === "function"
  );
}

export function isReadableProvider(provider: unknown): provider is AnyContextProvider {
  return hasMethod(provider, "get");
}

export function isSearchProvider(provider: unknown): provider is SearchProvider {
  return hasMethod(provider, "get") && hasMethod(provider, "search");
}

export function isSkillProvider(provider: unknown): provider is SkillProvider {
  return hasMethod(provider, "get") && hasMethod(provider, "load");
}

export function isWritableProvider(provider: unknown): provider is WritableContextProvider {
  return hasMethod(provider, "get") && hasMethod(provider, "set");
}

/** The block kind a provider's shape gives, in marker precedence: searchable > loadable > writable > readonly. */
export function blockKindOf(provider: unknown): BlockKind {
  if (typeof provider !== "object" || provider === null) return "readonly";
  // The same tests as `isSearchProvider` and the others, read by name: every block's config is resolved on
  // construction, and a lookup by a fixed name is cheaper than `hasMethod`'s lookup by a variable one.
  const methods = provider as { get?: unknown; search?: unknown; load?: unknown; set?: unknown };
  if (typeof methods.get !== "function") return "readonly";
  if (typeof methods.search === "function") return "searchable";
  if (typeof methods.load === "function") return "loadable";
  if (typeof methods.set === "function") return "writable";
  return "readonly";
}

/** Whether a block of this provider accepts writes: whole-block for writable, keyed for the others. */
export function acceptsWrites(provider: unknown): boolean {
  return hasMethod(provider, "set");
}

/** A writable provider that keeps versions (`versions`), see `VersionedProvider`. */
export function isVersionedProvider(provider: unknown): provider is VersionedProvider {
  return blockKindOf(provider) === "writable" && hasMethod(provider, "versions");
}

/** A loadable provider that keeps versions of its entries (`versions`), see `VersionedSkillProvider`. */
export function isVersionedSkillProvider(provider: unknown): provider is VersionedSkillProvider {
  return (
    blockKindOf(provider) === "loadable" && hasMethod(provider, "set") && hasMethod(provider, "versions")
  );
}

/** A writable provider with an atomic conditional write (`setIf`), see `ConditionalContextProvider`. */
export function isConditionalProvider(provider: unknown): provider is ConditionalContextProvider {
  return isWritableProvider(provider) && hasMethod(provider, "setIf");
}
