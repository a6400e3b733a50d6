import { loneSurrogateIndex } from "./text.js";
import type { StatementObserver } from "./types.js";

/** The options every SQLite-backed provider takes (`SqliteContextProvider`, `Fts5SearchProvider`). */
export interface SqliteProviderOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /** Keeps this provider's rows apart from every other namespace's and from plain `agents/context` rows. */
  namespace?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * What is wrong with a namespace option, or `null` when it is fine. One rule for every SQLite provider:
 * omitted (`undefined`) means no namespace; otherwise a non-empty, well-formed string.
 */
export function namespaceProblem(namespace: unknown): string | null {
  if (namespace === undefined) return null;
  if (typeof namespace !== "string" || namespace.length === 0) {
    const got =
      typeof namespace === "string"
        ? "an empty string"
        : namespace === null
          ? "null"
          : `a ${typeof namespace}`;
    return `a namespace must be a non-empty string or omitted, got ${got}`;
  }
  const index = loneSurrogateIndex(namespace);
  if (index !== -1) {
    return `the namespace has a lone UTF-16 surrogate at index ${index}, which SQLite cannot store unchanged`;
  }
  return null;
}
