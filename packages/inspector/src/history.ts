/** One stored version of a block, as the inspector shows it. */
export interface BlockVersionView {
  version: number;
  content: string;
  /** When it was written, where the history keeps it. */
  writtenAt: string | null;
  /** Who or what wrote it (a method, a tool, a restore), where the history keeps it. */
  source: string | null;
}

/**
 * What a context with block history offers (`ContextBlocks.blockVersions` / `restoreBlock`), found by shape
 * so the inspector works with contexts that have it and those that do not.
 */
export interface BlockHistoryCapable {
  blockVersions(label: string, ...rest: unknown[]): Promise<unknown>;
  restoreBlock?(label: string, version: number): Promise<unknown>;
}

export function hasBlockHistory(value: unknown): value is BlockHistoryCapable {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { blockVersions?: unknown }).blockVersions === "function"
  );
}

export function canRestore(value: unknown): value is Required<BlockHistoryCapable> {
  return hasBlockHistory(value) && typeof (value as { restoreBlock?: unknown }).restoreBlock === "function";
}

/**
 * Reads a block's versions, newest first, accepting the shapes a history may have: an array of versions,
 * or an object with `versions`. Each version needs a numeric `version` and a string `content`; its time
 * and source are read from the usual names when present.
 */
export async function readBlockHistory(
  context: BlockHistoryCapable,
  label: string,
): Promise<BlockVersionView[]> {
  const raw = await context.blockVersions(label);
  const list = Array.isArray(raw)
    ? raw
    : typeof raw === "object" && raw !== null && Array.isArray((raw as { versions?: unknown }).versions)
      ? ((raw as { versions: unknown[] }).versions as unknown[])
      : [];
  const versions: BlockVersionView[] = [];
  for (const item of list) {
    if (typeof item !== "object" || item === null) continue;
    const entry = item as Record<string, unknown>;
    if (typeof entry.version !== "number" || typeof entry.content !== "string") continue;
    const at = entry.writtenAt ?? entry.createdAt ?? entry.at ?? entry.timestamp;
    versions.push({
      version: entry.version,
      content: entry.content,
      writtenAt: typeof at === "string" ? at : typeof at === "number" ? new Date(at).toISOString() : null,
      source: sourceName(entry.source),
    });
  }
  return versions.sort((left, right) => right.version - left.version);
}

/** A version's source as a short name: a string as it is, core's `{ kind, name }` by its name. */
function sourceName(source: unknown): string | null {
  if (typeof source === "string") return source;
  const name = (source as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : null;
}
