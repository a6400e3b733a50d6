/**
 * The session storage contract the suite checks, declared here structurally (the conformance package
 * depends on no storage package): `@contextblocks/sessions`' `SessionStore` and the `AgentSessionProvider`
 * of Cloudflare agents' Sessions API (without `getNode` / `getTree`) satisfy it.
 */
export interface ConformanceMessage {
  id: string;
  role: string;
  parts: { type: string; text?: string }[];
}

type MaybePromise<T> = T | Promise<T>;

/** A message's place in the tree (`SessionStore.getNode`). */
export interface ConformanceNode {
  id: string;
  parentId: string | null;
  role: string;
  /** When it was stored, where the store keeps it. */
  createdAt?: string | null;
}

export interface SessionStoreUnderTest {
  getMessage(id: string): MaybePromise<ConformanceMessage | null>;
  getHistory(leafId?: string | null): MaybePromise<ConformanceMessage[]>;
  getLatestLeaf(): MaybePromise<ConformanceMessage | null>;
  getBranches(messageId: string): MaybePromise<ConformanceMessage[]>;
  getPathLength(leafId?: string | null): MaybePromise<number>;
  /** May report where the message went (`{ parentId, createdAt }`): the change feed reads no node back. */
  appendMessage(message: ConformanceMessage, parentId?: string | null): MaybePromise<unknown>;
  updateMessage(message: ConformanceMessage): MaybePromise<void>;
  deleteMessages(messageIds: string[]): MaybePromise<void>;
  clearMessages(): MaybePromise<void>;
  addCompaction(summary: string, fromMessageId: string, toMessageId: string): MaybePromise<{ id: string }>;
  getCompactions(): MaybePromise<
    { id: string; summary: string; fromMessageId: string; toMessageId: string }[]
  >;
  /** A message's place in the tree; checked when present (the `SessionStore` contract has it). */
  getNode?(id: string): MaybePromise<ConformanceNode | null>;
  /** Every message's place in the tree, in storage order; checked when present. */
  getTree?(options?: { limit?: number }): MaybePromise<ConformanceNode[]>;
  /** The path root..leaf without content; checked when present (optional in the `SessionStore` contract). */
  getPathNodes?(leafId?: string | null): MaybePromise<ConformanceNode[]>;
  /** Messages by id in the order asked, skipping ids not in the session; checked when present. */
  getMessages?(ids: readonly string[]): MaybePromise<ConformanceMessage[]>;
  /**
   * The stored path root..leaf, overlays not applied, in one read; with `maxBytes` it may stop after the
   * first message whose running stored size passes the budget. Checked when present.
   */
  getPathMessages?(
    leafId?: string | null,
    options?: { maxBytes?: number; newestFirst?: boolean },
  ): MaybePromise<{ messages: ConformanceMessage[]; truncated: boolean }>;
  /** Stores a message written elsewhere with its parent and time; checked when present. */
  importMessage?(message: ConformanceMessage, parentId: string | null, createdAt: string): MaybePromise<void>;
  searchMessages?(query: string, limit?: number): MaybePromise<ConformanceSearchHit[]>;
}

/** A search hit as the suite reads it (`SearchResult` of `@contextblocks/sessions`). */
export interface ConformanceSearchHit {
  id: string;
  role: string;
  content: string;
  /** Whether the message's own text matched, or only the turns around it. */
  matchedBy: "text" | "neighbours";
  /** Turns near the hit that matched too weakly to be hits of their own. */
  context?: { id: string; role: string; text: string }[];
}

/** What a session store can do, declared as data; undeclared groups are listed as skipped. */
export interface SessionConformanceCapabilities {
  /** `searchMessages(query, limit)` finds messages by the words of their text parts. */
  search?: boolean;
  /** `getNode(id)` and `getTree()` return the tree's parent links (every `SessionStore` has them). */
  tree?: boolean;
}

/** A fresh store on a fresh, isolated store on every call. */
export type SessionStoreFactory<P> = () => P | Promise<P>;

export interface SessionConformanceOptions<P extends SessionStoreUnderTest = SessionStoreUnderTest> {
  capabilities: SessionConformanceCapabilities;
  /** A store for another session (`sessionId`) on the same store as `store`. Enables isolation checks. */
  session?(store: P, sessionId: string): P | Promise<P>;
  /** A new instance on the same store and session as `store` (a restart). Enables durability checks. */
  reopen?(store: P): P | Promise<P>;
  /** Releases one instance after its test. */
  cleanup?(store: P): void | Promise<void>;
  /** Per-test timeout in milliseconds. */
  timeout?: number;
  /** Characters of the large text part. Default 1,048,576. */
  largePartSize?: number;
  /** Appends started at once by the concurrency check. Default 16. */
  concurrentAppends?: number;
  /** Bytes of the message the hostile-writes group stores whole. Default 3 MiB (over a 2 MB row). */
  oversizeMessageBytes?: number;
}

export const DEFAULT_LARGE_PART_SIZE = 1_048_576;
export const DEFAULT_CONCURRENT_APPENDS = 16;
