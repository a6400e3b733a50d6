import type { SessionMessage } from "./message.js";
import type { RecentHistoryResult, SearchResult, StoredCompaction } from "./session-store.js";

export type { RecentHistoryResult, SearchResult, StoredCompaction };

type MaybePromise<T> = T | Promise<T>;

/**
 * Storage of one session's messages as a tree (each message points to its parent). The twelve methods
 * of the seed; `getRecentHistory` is optional (a session falls back to `getHistory`), `searchMessages` is
 * optional (`Session.search` then throws `UNSUPPORTED`).
 */
export interface SessionProvider {
  getMessage(id: string): MaybePromise<SessionMessage | null>;
  /** Root-to-leaf path to `leafId` (default: the latest leaf), compaction overlays applied. */
  getHistory(leafId?: string | null): MaybePromise<SessionMessage[]>;
  /** The newest message that has no child, or `null` for an empty session. */
  getLatestLeaf(): MaybePromise<SessionMessage | null>;
  /** The children of `messageId`, oldest first. */
  getBranches(messageId: string): MaybePromise<SessionMessage[]>;
  /** Messages on the path root..leaf (default: the latest leaf), overlays not applied. */
  getPathLength(leafId?: string | null): MaybePromise<number>;
  /**
   * Stores a message under `parentId`: omitted means the latest leaf, `null` a new root. Refuses (throws)
   * an id that exists, a parent that does not, and anything that is not a `SessionMessage`.
   */
  appendMessage(message: SessionMessage, parentId?: string | null): MaybePromise<void>;
  /** Replaces the stored message with the same id (content only; its place in the tree stays). */
  updateMessage(message: SessionMessage): MaybePromise<void>;
  deleteMessages(messageIds: readonly string[]): MaybePromise<void>;
  /** Deletes every message and overlay of the session. */
  clearMessages(): MaybePromise<void>;
  addCompaction(summary: string, fromMessageId: string, toMessageId: string): MaybePromise<StoredCompaction>;
  /** Overlays, oldest first. */
  getCompactions(): MaybePromise<StoredCompaction[]>;
  searchMessages?(query: string, limit?: number): MaybePromise<SearchResult[]>;
  /** The newest messages of the path whose stored size fits `maxBytes` (at least `minMessages`). */
  getRecentHistory?(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages?: number,
  ): MaybePromise<RecentHistoryResult>;
}

/** True for an object with the methods of a `SessionProvider` (structural, like every provider check). */
export function isSessionProvider(value: unknown): value is SessionProvider {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.getHistory === "function" &&
    typeof candidate.appendMessage === "function" &&
    typeof candidate.getLatestLeaf === "function" &&
    typeof candidate.addCompaction === "function"
  );
}
