/**
 * The first character of every namespaced row label. A control character: `ContextBlocks` refuses control
 * characters in labels, and the stores refuse a plain label that starts with it, so no plain label (the
 * label `agents/context` also stores) can ever equal a namespaced one.
 */
export const NAMESPACE_MARK = "\u001f";

/**
 * The value stored in the `label` column for a block (its row label).
 *
 * - Without a namespace: the label itself, exactly as `agents/context` stores it.
 * - With a namespace: `NAMESPACE_MARK + JSON.stringify([namespace, label])`, e.g. `\u001f["tenant-a","memory"]`.
 *
 * Injective: JSON encodes every string reversibly, so two different (namespace, label) pairs never share a
 * row label, and the mark keeps namespaced labels apart from plain ones. All labels of one namespace share
 * the prefix `namespacePrefix(namespace)`.
 */
export function rowLabel(label: string, namespace: string | undefined): string {
  if (namespace === undefined) return label;
  return NAMESPACE_MARK + JSON.stringify([namespace, label]);
}

/** What every row label of `namespace` starts with (`\u001f["<namespace>",`): deletes a namespace's rows. */
export function namespacePrefix(namespace: string): string {
  // JSON.stringify([namespace, ""]) ends in `""]`: cut it, keeping the comma after the namespace.
  return NAMESPACE_MARK + JSON.stringify([namespace, ""]).slice(0, -3);
}
