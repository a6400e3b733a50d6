import {
  ContextError,
  checkNamespace as checkNamespaceOption,
  checkRowLabel,
  type LabelCheckOptions,
  loneSurrogateProblem,
} from "@contextblocks/core";

// Re-exported until postgres imports them from @contextblocks/core (row labels moved there).
export { NAMESPACE_MARK, rowLabel } from "@contextblocks/core";

/** What SQLite cannot hold unchanged: it keeps UTF-8, where a lone UTF-16 surrogate becomes U+FFFD. */
const unstorable = loneSurrogateProblem("SQLite");

function checks(owner: string): LabelCheckOptions {
  return { owner, unstorable };
}

/** Checks a label stored as a row label (core's `checkRowLabel` with SQLite's rule); throws a `ContextError`. */
export function checkLabel(
  label: unknown,
  namespace: string | undefined,
  owner = "SqliteContextProvider",
): string {
  return checkRowLabel(label, namespace, checks(owner));
}

/** Checks a namespace; `undefined` means none (core's `checkNamespace` with SQLite's rule). */
export function checkNamespace(namespace: unknown, owner = "SqliteContextProvider"): string | undefined {
  return checkNamespaceOption(namespace, checks(owner));
}

/** Refuses text SQLite would change (a lone surrogate), naming where it is. */
export function checkWellFormed(
  text: string,
  what: string,
  code: "INVALID_CONFIG" | "INVALID_INPUT",
  label: string | undefined,
  owner = "SqliteContextProvider",
): void {
  const problem = unstorable(text);
  if (problem !== null) {
    throw new ContextError(
      code,
      `${owner}: the ${what} ${problem}`,
      label === undefined ? undefined : { label },
    );
  }
}
