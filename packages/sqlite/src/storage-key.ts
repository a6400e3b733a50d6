import { ContextError } from "@contextblocks/core";
import { loneSurrogateIndex, namespaceProblem } from "@contextblocks/sql";

/**
 * The first character of every namespaced key. A control character: `ContextBlocks` refuses control
 * characters in labels, and the provider refuses a plain label that starts with it, so no plain label
 * (the key `agents/context` also uses) can ever equal a namespaced key.
 */
export const NAMESPACE_MARK = "\u001f";

/**
 * The value stored in the `label` column for a block (its row label; "key" is kept for keyed entries).
 *
 * - Without a namespace: the label itself, exactly as `agents/context` stores it.
 * - With a namespace: `NAMESPACE_MARK + JSON.stringify([namespace, label])`, e.g. `\u001f["tenant-a","memory"]`.
 *
 * Injective: JSON encodes every string reversibly, so two different (namespace, label) pairs never share a
 * key, and the mark keeps namespaced keys apart from plain ones. All keys of one namespace share the prefix
 * `NAMESPACE_MARK + '["<namespace>",'`.
 */
export function rowLabel(label: string, namespace: string | undefined): string {
  if (namespace === undefined) return label;
  return NAMESPACE_MARK + JSON.stringify([namespace, label]);
}

/** Checks a label; throws a `ContextError` naming the problem (and `owner`, the provider class). */
export function checkLabel(
  label: unknown,
  namespace: string | undefined,
  owner = "SqliteContextProvider",
): string {
  if (typeof label !== "string" || label.length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: a label must be a non-empty string, got ${kindOf(label)}`,
    );
  }
  checkWellFormed(label, "label", "INVALID_CONFIG", label, owner);
  if (namespace === undefined && label.startsWith(NAMESPACE_MARK)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: a label must not start with U+001F, which marks namespaced rows`,
      { label },
    );
  }
  return label;
}

/** Checks a namespace; `undefined` means none (the rule every SQLite provider shares, from `sql`). */
export function checkNamespace(namespace: unknown, owner = "SqliteContextProvider"): string | undefined {
  const problem = namespaceProblem(namespace);
  if (problem !== null) throw new ContextError("INVALID_CONFIG", `${owner}: ${problem}`);
  return namespace as string | undefined;
}

/** Refuses text SQLite would change (a lone surrogate), naming where it is. */
export function checkWellFormed(
  text: string,
  what: string,
  code: "INVALID_CONFIG" | "INVALID_INPUT",
  label: string | undefined,
  owner = "SqliteContextProvider",
): void {
  const index = loneSurrogateIndex(text);
  if (index !== -1) {
    throw new ContextError(
      code,
      `${owner}: the ${what} has a lone UTF-16 surrogate at index ${index}, which SQLite cannot store unchanged`,
      label === undefined ? undefined : { label },
    );
  }
}

export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length === 0 ? "an empty string" : "a string";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
