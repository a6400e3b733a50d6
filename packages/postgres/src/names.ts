import { ContextError } from "@contextblocks/core";
import { NAMESPACE_MARK } from "@contextblocks/sqlite";
import { checkStorable, kindOf } from "./text-checks.js";

/** Checks a block label; a plain label must not start with the namespace mark (it could alias a namespaced row). */
export function checkLabel(label: unknown, namespace: string | undefined, provider: string): string {
  if (typeof label !== "string" || label.length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${provider}: a label must be a non-empty string, got ${kindOf(label)}`,
    );
  }
  checkStorable(label, "label", provider, "INVALID_CONFIG", label);
  if (namespace === undefined && label.startsWith(NAMESPACE_MARK)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${provider}: a label must not start with U+001F, which marks namespaced rows`,
      { label },
    );
  }
  return label;
}

/** Checks a namespace; `undefined` means none. */
export function checkNamespace(namespace: unknown, provider: string): string | undefined {
  if (namespace === undefined) return undefined;
  if (typeof namespace !== "string" || namespace.length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${provider}: a namespace must be a non-empty string or omitted, got ${kindOf(namespace)}`,
    );
  }
  checkStorable(namespace, "namespace", provider, "INVALID_CONFIG", undefined);
  return namespace;
}
