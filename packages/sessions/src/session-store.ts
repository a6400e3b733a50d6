import type { SessionMessage } from "./message.js";

/** A compaction overlay: the messages `fromMessageId..toMessageId` of a path read as one summary. */
export interface StoredCompaction {
  id: string;
  summary: string;
  fromMessageId: string;
  toMessageId: string;
  createdAt: string;
}

/** One search hit: the message's id, role and searchable text. */
export interface SearchResult {
  id: string;
  role: string;
  content: string;
  /**
   * `"text"`: the message's own text holds a query word. `"neighbours"`: it ranked by the turns around it
   * (the question before an answer), strongly enough to be a hit of its own.
   */
  matchedBy: "text" | "neighbours";
  /** Turns beside the hit that matched too weakly to be hits of their own, their text capped in tokens. */
  context?: SearchContextTurn[];
  createdAt?: string;
  /** Set by cross-session searches (`SessionManager.search`). */
  sessionId?: string;
}

/** A turn shown as context of a search hit: its text may be cut ("…" at the end). */
export interface SearchContextTurn {
  id: string;
  role: string;
  text: string;
  /** Where the turn stands: before the hit (its parent or grandparent) or after it (a child or grandchild). */
  position?: "before" | "after";
}

/** A byte-budgeted read of the newest messages of a path (see `getRecentHistory`). */
export interface RecentHistoryResult {
  /** Root-to-leaf order, overlays applied within the window. */
  messages: SessionMessage[];
  /** True when older messages were left out to stay within the budget. */
  truncated: boolean;
  /** Stored bytes of the messages read (the window, not the whole path: the rest is never read). */
  totalContentBytes: number;
}

/** What `SessionStore.getPathMessages` returns. */
export interface PathMessagesResult {
  /** Stored messages of the path, root first, overlays not applied. */
  messages: SessionMessage[];
  /** True when `maxBytes` stopped the read before the leaf (messages nearer the leaf were left out). */
  truncated: boolean;
}

/** A message's place in the tree, without its content (what an inspector draws). */
export interface MessageNode {
  id: string;
  /** `null` for a root. */
  parentId: string | null;
  role: string;
  /** When it was stored, as ISO text where the store keeps it. */
  createdAt: string | null;
}

/** What a store reports of an append: the place it chose (the change feed's `message-appended`). */
export interface AppendedMessage {
  /** The parent the message was stored under (`null`: a root). */
  parentId: string | null;
  /** The row's stored time where the store keeps it, else `null`. */
  createdAt: string | null;
}

/**
 * Storage of one session's messages as a tree (each message points to its parent): the message-tree
 * contract of Cloudflare agents' Sessions API, plus the parent links and the whole tree for inspectors.
 * Implemented by `MessageTree` over any store on the storage contract `SessionStoreV1` (`SqliteSessionStore`,
 * `InMemorySessionStore`), by `PostgresSessionStore`, and checked by `describeSessionStore` in
 * `@contextblocks/conformance`.
 */
export interface SessionStore {
  /** The session this store reads and writes (`""` is the default session). */
  readonly sessionId: string;
  getMessage(id: string): Promise<SessionMessage | null>;
  /** Root-to-leaf path to `leafId` (default: the latest leaf), compaction overlays applied. */
  getHistory(leafId?: string | null): Promise<SessionMessage[]>;
  /** The newest message that has no child, or `null` for an empty session. */
  getLatestLeaf(): Promise<SessionMessage | null>;
  /** The children of `messageId`, oldest first. */
  getBranches(messageId: string): Promise<SessionMessage[]>;
  /** Messages on the path root..leaf (default: the latest leaf), overlays not applied. */
  getPathLength(leafId?: string | null): Promise<number>;
  /** The message's place in the tree (its parent), or `null` when it is not stored. */
  getNode(id: string): Promise<MessageNode | null>;
  /** Every stored message's place in the tree, in the order they were stored (at most `limit`). */
  getTree(options?: { limit?: number }): Promise<MessageNode[]>;
  /**
   * Stores a message under `parentId`: omitted means the latest leaf, `null` a new root. Refuses (throws)
   * a parent that does not exist and anything that is not a `SessionMessage`. Ids are unique across the
   * sessions of a database: an id already stored is refused with `INVALID_INPUT` naming it (never another
   * session that holds it: ids may come from a client), and nothing is stored, except an identical retry
   * (same session, id and content, and the same parent when one is given), which succeeds without a second
   * row (`isIdenticalRetry`). A store may
   * return where it put the message (`AppendedMessage`), so `Session`'s change feed needs no read back
   * (without it, `Session` reads the node with `getNode` when it has a listener).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: stores written before AppendedMessage return Promise<void>
  appendMessage(message: SessionMessage, parentId?: string | null): Promise<void | AppendedMessage>;
  /** Replaces the stored message with the same id (content only; its place in the tree stays). */
  updateMessage(message: SessionMessage): Promise<void>;
  deleteMessages(messageIds: readonly string[]): Promise<void>;
  /** Deletes every message, overlay and search row of the session. */
  clearMessages(): Promise<void>;
  addCompaction(summary: string, fromMessageId: string, toMessageId: string): Promise<StoredCompaction>;
  /** Overlays, oldest first. */
  getCompactions(): Promise<StoredCompaction[]>;
  /** Full-text search over this session's messages. Optional: `Session.search` throws `UNSUPPORTED` without it. */
  searchMessages?(query: string, limit?: number): Promise<SearchResult[]>;
  /**
   * The path root..leaf (default: the latest leaf) without content, overlays not applied: what a streamed
   * read plans on. Optional: `Session.history` / `historyBatches` walk `getNode` from the leaf without it.
   */
  getPathNodes?(leafId?: string | null): Promise<MessageNode[]>;
  /**
   * The stored messages with these ids, in the order asked; ids not in this session are skipped. Optional:
   * streamed reads call `getMessage` per id without it.
   */
  getMessages?(ids: readonly string[]): Promise<SessionMessage[]>;
  /**
   * The stored messages of the path root..leaf (default: the latest leaf), overlays not applied, in one
   * bounded read (about one row read per message): what `Session.history` / `historyBatches` read when the
   * store has it, applying overlays as `getHistory` does. With `maxBytes`, the store may stop after the
   * first message (root first; leaf first with `newestFirst`) at which the running total of stored bytes
   * (UTF-8 of the stored JSON, what `messageBytes` measures) passes `maxBytes`, and says so with
   * `truncated`; the caller cuts exactly. The messages are root first either way (with `newestFirst` and a
   * budget, the newest part of the path). A path longer than `maximumPathLength` fails with
   * `INVALID_INPUT`, as `getHistory` does (a read the budget stopped first need not). Optional: without it
   * the streamed reads use `getPathNodes` / `getMessages` (or a `getNode` walk).
   */
  getPathMessages?(
    leafId?: string | null,
    options?: { maxBytes?: number; newestFirst?: boolean },
  ): Promise<PathMessagesResult>;
  /**
   * Stores a message as it was written elsewhere (a migration, another object, a mirrored change feed):
   * under the explicit `parentId`, with `createdAt` as its stored time. The same refusals as
   * `appendMessage`. Optional: `Session.importMessage` appends the message (its `createdAt` field set)
   * without it, and the row's own time is then the time of the import.
   */
  importMessage?(message: SessionMessage, parentId: string | null, createdAt: string): Promise<void>;
  /**
   * Estimated tokens of the path root..leaf (default: the latest leaf) as `getHistory` returns it (overlays
   * applied), from the token stamps the store keeps per message (`messageTokenStamp`, written on append;
   * rows without one, from an older writer, are estimated from their content). What `compactAfter`
   * decides from without reading the history. Optional: `Session` estimates `getHistory()` without it.
   */
  getPathTokens?(leafId?: string | null): Promise<number>;
  /**
   * The session's token calibration (provider-reported input tokens over the estimate of the same prompt,
   * from `Session.reportUsage`), kept in storage so a new `Session` on the same database uses it; `null`
   * before any report. Optional, with `setTokenCalibration`: without them it lives in the `Session` object.
   */
  getTokenCalibration?(): Promise<number | null>;
  setTokenCalibration?(calibration: number): Promise<void>;
  /** The newest messages of the path whose stored size fits `maxBytes` (at least `minMessages`). */
  getRecentHistory?(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages?: number,
  ): Promise<RecentHistoryResult>;
}

/** True for an object with the methods of a `SessionStore` (structural, like every provider check). */
export function isSessionStore(value: unknown): value is SessionStore {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.getHistory === "function" &&
    typeof candidate.appendMessage === "function" &&
    typeof candidate.getLatestLeaf === "function" &&
    typeof candidate.addCompaction === "function"
  );
}
