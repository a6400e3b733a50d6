import { ContextError } from "@contextblocks/core";
import type { SqlDialect } from "@contextblocks/sql";
import { NAMESPACE_MARK } from "./row-label.js";
import { checkStorable, kindOf } from "./text-checks.js";

/** Checks a block label; a plain label must not start with the namespace mark (it could alias a namespaced row). */
export function checkLabel(
  label: unknown,
  namespace: string | undefined,
  owner: string,
  dialect: SqlDialect,
): string {
  if (typeof label !== "string" || label.length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: a label must be a non-empty string, got ${kindOf(label)}`,
    );
  }
  checkStorable(label, "label", owner, dialect, "INVALID_CONFIG", label);
  if (namespace === undefined && label.startsWith(NAMESPACE_MARK)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: a label must not start with U+001F, which marks namespaced rows`,
      { label },
    );
  }
  return label;
}

/** Checks a namespace; `undefined` means none, anything else must be a non-empty storable string. */
export function checkNamespace(namespace: unknown, owner: string, dialect: SqlDialect): string | undefined {
  if (namespace === undefined) return undefined;
  if (typeof namespace !== "string" || namespace.length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: a namespace must be a non-empty string or omitted, got ${kindOf(namespace)}`,
    );
  }
  checkStorable(namespace, "namespace", owner, dialect, "INVALID_CONFIG", undefined);
  return namespace;
}
