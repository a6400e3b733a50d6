import type {
  AnyContextProvider,
  BlockKind,
  ConditionalContextProvider,
  HistoryProvider,
  SearchProvider,
  SkillProvider,
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
  if (isSearchProvider(provider)) return "searchable";
  if (isSkillProvider(provider)) return "loadable";
  if (isWritableProvider(provider)) return "writable";
  return "readonly";
}

/** Whether a block of this provider accepts writes: whole-block for writable, keyed for the others. */
export function acceptsWrites(provider: unknown): boolean {
  return hasMethod(provider, "set");
}

/** A writable provider that keeps versions (`history`), see `HistoryProvider`. */
export function isHistoryProvider(provider: unknown): provider is HistoryProvider {
  return isWritableProvider(provider) && hasMethod(provider, "history");
}

/** A writable provider with an atomic conditional write (`setIf`), see `ConditionalContextProvider`. */
export function isConditionalProvider(provider: unknown): provider is ConditionalContextProvider {
  return isWritableProvider(provider) && hasMethod(provider, "setIf");
}
