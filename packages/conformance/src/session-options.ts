/**
 * The session storage contract the suite checks, declared here structurally (the conformance package
 * depends on no storage package): `@contextblocks/sessions`' `SessionProvider` and the seed's satisfy it.
 */
export interface ConformanceMessage {
  id: string;
  role: string;
  parts: { type: string; text?: string }[];
}

type MaybePromise<T> = T | Promise<T>;

export interface SessionProviderUnderTest {
  getMessage(id: string): MaybePromise<ConformanceMessage | null>;
  getHistory(leafId?: string | null): MaybePromise<ConformanceMessage[]>;
  getLatestLeaf(): MaybePromise<ConformanceMessage | null>;
  getBranches(messageId: string): MaybePromise<ConformanceMessage[]>;
  getPathLength(leafId?: string | null): MaybePromise<number>;
  appendMessage(message: ConformanceMessage, parentId?: string | null): MaybePromise<void>;
  updateMessage(message: ConformanceMessage): MaybePromise<void>;
  deleteMessages(messageIds: string[]): MaybePromise<void>;
  clearMessages(): MaybePromise<void>;
  addCompaction(summary: string, fromMessageId: string, toMessageId: string): MaybePromise<{ id: string }>;
  getCompactions(): MaybePromise<
    { id: string; summary: string; fromMessageId: string; toMessageId: string }[]
  >;
  searchMessages?(
    query: string,
    limit?: number,
  ): MaybePromise<{ id: string; role: string; content: string }[]>;
}

/** What a session provider can do, declared as data; undeclared groups are listed as skipped. */
export interface SessionConformanceCapabilities {
  /** `searchMessages(query, limit)` finds messages by the words of their text parts. */
  search?: boolean;
}

/** A fresh provider on a fresh, isolated store on every call. */
export type SessionProviderFactory<P> = () => P | Promise<P>;

export interface SessionConformanceOptions<P extends SessionProviderUnderTest = SessionProviderUnderTest> {
  capabilities: SessionConformanceCapabilities;
  /** A provider for another session (`sessionId`) on the same store as `provider`. Enables isolation checks. */
  session?(provider: P, sessionId: string): P | Promise<P>;
  /** A new instance on the same store and session as `provider` (a restart). Enables durability checks. */
  reopen?(provider: P): P | Promise<P>;
  /** Releases one instance after its test. */
  cleanup?(provider: P): void | Promise<void>;
  /** Per-test timeout in milliseconds. */
  timeout?: number;
  /** Characters of the large text part. Default 1,048,576. */
  largePartSize?: number;
  /** Appends started at once by the concurrency check. Default 16. */
  concurrentAppends?: number;
}

export const DEFAULT_LARGE_PART_SIZE = 1_048_576;
export const DEFAULT_CONCURRENT_APPENDS = 16;
