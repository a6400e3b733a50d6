import type { BlockVersion, BlockWrite, VersionQuery } from "../types.js";

/** Versions a block (or an entry) keeps when no `versionRetention` is given. */
export const DEFAULT_HISTORY_RETENTION = 50;

/**
 * The in-memory providers' versions of a block or of one keyed entry (`kept`, oldest first): the one place
 * their numbering, retention and listing rules are written.
 */

/** Records `content` as the next version in `kept` and drops the oldest past `retention`. */
export function recordVersion(
  kept: BlockVersion[],
  content: string,
  write: BlockWrite | undefined,
  retention: number,
): void {
  kept.push({
    version: (kept.at(-1)?.version ?? 0) + 1,
    content,
    writtenAt: new Date().toISOString(),
    source: write?.source ? { ...write.source } : { kind: "api", name: "set" },
  });
  if (kept.length > retention) kept.splice(0, kept.length - retention);
}

/** Newest first: at most `limit`, or only `version`; copies, so a caller cannot change what is kept. */
export function listVersions(kept: readonly BlockVersion[], query: VersionQuery = {}): BlockVersion[] {
  const newestFirst = [...kept].reverse();
  const selected =
    query.version === undefined
      ? newestFirst.slice(0, query.limit ?? newestFirst.length)
      : newestFirst.filter((version) => version.version === query.version);
  return selected.map((version) => ({ ...version, source: { ...version.source } }));
}

/** A `versionRetention` option checked: a positive integer, 50 when omitted. */
export function checkRetention(owner: string, retention: number | undefined): number {
  const kept = retention ?? DEFAULT_HISTORY_RETENTION;
  if (!Number.isSafeInteger(kept) || kept < 1) {
    throw new Error(`${owner}: versionRetention must be a positive integer, got ${kept}`);
  }
  return kept;
}
