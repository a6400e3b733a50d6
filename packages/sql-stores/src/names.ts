import {
  checkNamespace as checkCoreNamespace,
  checkRowLabel,
  type LabelCheckOptions,
  type UnstorableText,
} from "@contextblocks/core/store-kit";
import type { SqlDialect } from "@contextblocks/sql/store-kit";
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

/**
 * The check options of each store class, per dialect, made once: every block store checks its label and
 * namespace when it is constructed, and a cold start constructs one per block.
 */
const CHECKS: Record<SqlDialect, Map<string, LabelCheckOptions>> = { sqlite: new Map(), postgres: new Map() };
const UNSTORABLE: Record<SqlDialect, UnstorableText> = {
  sqlite: unstorableIn("sqlite"),
  postgres: unstorableIn("postgres"),
};

/** The label checks of store class `owner` on `dialect` (one object per pair, kept by stores that share settings). */
export function labelChecks(owner: string, dialect: SqlDialect): LabelCheckOptions {
  const byOwner = CHECKS[dialect];
  let options = byOwner.get(owner);
  if (options === undefined) {
    options = { owner, unstorable: UNSTORABLE[dialect] };
    byOwner.set(owner, options);
  }
  return options;
}

/** Checks a block label (core's `checkRowLabel`) against what `dialect` can store. */
export function checkSqlLabel(
  label: unknown,
  namespace: string | undefined,
  owner: string,
  dialect: SqlDialect,
): string {
  return checkRowLabel(label, namespace, labelChecks(owner, dialect));
}

/** Checks a namespace (core's `checkNamespace`); `undefined` means none. */
export function checkNamespace(namespace: unknown, owner: string, dialect: SqlDialect): string | undefined {
  return checkCoreNamespace(namespace, labelChecks(owner, dialect));
}
