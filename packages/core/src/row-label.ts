import { describeValue } from "./describe-value.js";
import { ContextError } from "./errors.js";
import { loneSurrogateIndex } from "./well-formed.js";

/**
 * Row labels: how a block's rows are told apart when several tenants, sessions or agents share one table.
 * SQLite and Postgres store namespaced block rows the same way (the `label` column of `agents/context`'s
 * `cf_agents_context_blocks` and its Postgres twin), so the encoding and its checks live here, storage-neutral:
 * each store passes its class name and what it cannot hold.
 */

/**
 * The first character of every namespaced row label. A control character: `ContextBlocks` refuses control
 * characters in labels, and `checkRowLabel` refuses a plain label that starts with it, so no plain label
 * (the row label `agents/context` also uses) can ever equal a namespaced one.
 */
export const NAMESPACE_MARK = "\u001f";

/**
 * The value stored in the `label` column for a block.
 *
 * - Without a namespace: the label itself, exactly as `agents/context` stores it.
 * - With a namespace: `NAMESPACE_MARK + JSON.stringify([namespace, label])`, e.g. `\u001f["tenant-a","memory"]`.
 *
 * Injective: JSON encodes every string reversibly, so two different (namespace, label) pairs never share a
 * row label, and the mark keeps namespaced labels apart from plain ones. All row labels of one namespace share
 * the prefix `NAMESPACE_MARK + '["<namespace>",'`.
 */
export function rowLabel(label: string, namespace: string | undefined): string {
  if (namespace === undefined) return label;
  return NAMESPACE_MARK + JSON.stringify([namespace, label]);
}

/** What every row label of `namespace` starts with (`\u001f["<namespace>",`): selects a namespace's rows. */
export function namespacePrefix(namespace: string): string {
  // JSON.stringify([namespace, ""]) ends in `""]`: cut it, keeping the comma after the namespace.
  return NAMESPACE_MARK + JSON.stringify([namespace, ""]).slice(0, -3);
}

/**
 * What a store cannot hold in a text, as the end of a sentence ("has a lone UTF-16 surrogate at index 3,
 * which SQLite cannot store unchanged"), or `null` when it holds the text unchanged.
 */
export type UnstorableText = (text: string) => string | null;

/** The check of a UTF-8 store (SQLite, R2): a lone UTF-16 surrogate would become U+FFFD. */
export function loneSurrogateProblem(store: string): UnstorableText {
  return (text) => {
    const index = loneSurrogateIndex(text);
    return index === -1
      ? null
      : `has a lone UTF-16 surrogate at index ${index}, which ${store} cannot store unchanged`;
  };
}

/** Who checks, for the messages, and what its store cannot hold. */
export interface LabelCheckOptions {
  /** The class named in messages: `SqliteContextProvider`, `PostgresSearchProvider`. */
  readonly owner: string;
  /** What the store cannot hold. */
  readonly unstorable: UnstorableText;
}

/**
 * What is wrong with a namespace option, or `null` when it is fine. One rule for every store: omitted
 * (`undefined`) means no namespace; otherwise a non-empty string the store holds unchanged.
 */
export function namespaceProblem(namespace: unknown, unstorable: UnstorableText): string | null {
  if (namespace === undefined) return null;
  if (typeof namespace !== "string" || namespace.length === 0) {
    return `a namespace must be a non-empty string or omitted, got ${describeValue(namespace)}`;
  }
  const problem = unstorable(namespace);
  return problem === null ? null : `the namespace ${problem}`;
}

/** Checks a namespace option; `undefined` means none. Throws an `INVALID_CONFIG` `ContextError`. */
export function checkNamespace(namespace: unknown, options: LabelCheckOptions): string | undefined {
  const problem = namespaceProblem(namespace, options.unstorable);
  if (problem !== null) throw new ContextError("INVALID_CONFIG", `${options.owner}: ${problem}`);
  return namespace as string | undefined;
}

/** Checks a block label the store keeps: a non-empty string it holds unchanged. Throws `INVALID_CONFIG`. */
export function checkStoredLabel(label: unknown, options: LabelCheckOptions): string {
  if (typeof label !== "string" || label.length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${options.owner}: a label must be a non-empty string, got ${describeValue(label)}`,
    );
  }
  const problem = options.unstorable(label);
  if (problem !== null) {
    throw new ContextError("INVALID_CONFIG", `${options.owner}: the label ${problem}`, { label });
  }
  return label;
}

/**
 * Checks a label stored as a row label (`rowLabel`): as `checkStoredLabel`, and without a namespace it must not
 * start with `NAMESPACE_MARK`, or it could address another namespace's rows.
 */
export function checkRowLabel(
  label: unknown,
  namespace: string | undefined,
  options: LabelCheckOptions,
): string {
  const checked = checkStoredLabel(label, options);
  if (namespace === undefined && checked.startsWith(NAMESPACE_MARK)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${options.owner}: a label must not start with U+001F, which marks namespaced rows`,
      { label: checked },
    );
  }
  return checked;
}
