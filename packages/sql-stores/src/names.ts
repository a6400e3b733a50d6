import {
  checkNamespace as checkCoreNamespace,
  checkRowLabel,
  type UnstorableText,
} from "@contextblocks/core";
import type { SqlDialect } from "@contextblocks/sql";
import { unstorable } from "./text-checks.js";

/** What `dialect` cannot hold, in the words of core's row-label checks. */
function unstorableIn(dialect: SqlDialect): UnstorableText {
  const database = dialect === "postgres" ? "Postgres text" : "SQLite";
  return (text) => {
    const found = unstorable(text, dialect);
    return found === null
      ? null
      : `has ${found.problem} at index ${found.index}, which ${database} cannot store unchanged`;
  };
}

/** Checks a block label (core's `checkRowLabel`) against what `dialect` can store. */
export function checkLabel(
  label: unknown,
  namespace: string | undefined,
  owner: string,
  dialect: SqlDialect,
): string {
  return checkRowLabel(label, namespace, { owner, unstorable: unstorableIn(dialect) });
}

/** Checks a namespace (core's `checkNamespace`); `undefined` means none. */
export function checkNamespace(namespace: unknown, owner: string, dialect: SqlDialect): string | undefined {
  return checkCoreNamespace(namespace, { owner, unstorable: unstorableIn(dialect) });
}
