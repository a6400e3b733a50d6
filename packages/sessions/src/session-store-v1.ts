import type { StoredCompaction } from "./session-store.js";

/**
 * The storage contract of a session's messages, version 1: what storage alone must do. Every rule (input
 * checks, identical retries, overlays, token stamps and calibration, path budgets, the wording of refusals)
 * runs once above it, in `@contextblocks/sessions`' message tree, so a store holds records and answers
 * questions about them, nothing more. Versioned as the AI SDK versions `LanguageModelV3`: a store says which
 * contract it implements, and a later version can be told apart from this one.
 *
 * What a store must do atomically (inside one write, whatever else runs at the same time) is listed on
 * `append`: that is the whole of its concurrency duty. `describeSessionStoreV1` in `@contextblocks/conformance`
 * checks every member, and says "skipped" with a reason for an optional one the store leaves out.
 */
export interface SessionStoreV1 {
  readonly specificationVersion: "v1";
  /** The session this store reads and writes (`""`: the default session). */
  readonly sessionId: string;
  /**
   * Optional: `true` when reading a path with content costs about what reading it without content does (a
   * SQL store: a row per message either way, and each row billed on a Durable Object). Streamed history
   * reads then read the path once (`MessageTree.getPathMessages`), holding it whole, instead of reading it
   * without content and then its content one batch at a time (two reads per message, one batch in memory).
   */
  readonly wholePathReads?: boolean;

  /**
   * The path from the root to `leafId` (`undefined`: the latest leaf), root first: at most `limit` records,
   * the ones nearest the leaf (a bound on a long or looping parent chain; the caller always passes one).
   * The walk ends at a root, at a parent that is not stored in this session, or at a record seen before.
   * An unknown `leafId` or an empty session gives `[]`. Records carry `content` when `content` is true.
   */
  readPath(
    leafId: string | undefined,
    options: { limit: number; content: boolean },
  ): Promise<MessageRecord[]>;
  /** The records of this session with these ids, with content, in the order asked; other ids are skipped. */
  readMessages(ids: readonly string[]): Promise<MessageRecord[]>;
  /** The records whose parent is `parentId`, with content, oldest first. */
  readChildren(parentId: string): Promise<MessageRecord[]>;
  /** The first `limit` records of the session in the order they were stored, content optional. */
  readTree(limit: number): Promise<MessageRecord[]>;

  /**
   * Stores `records` as one chain, all or nothing: the first under `placement.parentId` (`undefined`: the
   * latest leaf, `null`: a new root), each next one under the one before. Atomically with the write, the
   * store checks, and on the first that fails stores nothing and answers the conflict instead:
   * - `stale-leaf`: `expectedLeafId` was given and is not the session's latest leaf (`null`: not empty);
   * - `parent-missing`: the named parent is not stored in this session;
   * - `id-taken`: a record's id is stored already, in any session of the database (ids are unique per
   *   database), with the holder's session, parent and content so the caller can tell a retry;
   * - `still-a-parent`: a record's id is the parent of a stored record of this session (an id deleted
   *   without its children: storing it again could close a cycle).
   * `createdAt` on a record is kept as given. Every write (this one and the others) must also be safe
   * against concurrent writes of its own: a store that keeps counters or lists of its own (an insertion
   * number, an overlay list) must not lose one to another writer.
   */
  append(records: readonly MessageRecord[], placement: AppendPlacement): Promise<AppendResult>;
  /**
   * Replaces the stored record with this id in this session (role, content, bytes, tokens, text; its parent
   * and time stay: the given `parentId` and `createdAt` are ignored). `false` when the session holds no such id.
   */
  update(record: MessageRecord): Promise<boolean>;
  /**
   * Deletes these ids of this session (others are ignored). Their children stay, still naming the deleted
   * parent (a path read ends at them, and `append` answers `still-a-parent` for that id).
   */
  delete(ids: readonly string[]): Promise<void>;
  /** Deletes every record, overlay, search row and calibration of the session. */
  clear(): Promise<void>;

  /** Stores a compaction overlay as given. */
  addOverlay(overlay: StoredCompaction): Promise<void>;
  /** The session's overlays, oldest first. */
  readOverlays(): Promise<StoredCompaction[]>;
  /**
   * Optional: the session's newest overlay (`null`: none), what a retried `addCompaction` compares against,
   * read without reading every overlay. Without it the tree takes the last of `readOverlays()`.
   */
  readNewestOverlay?(): Promise<StoredCompaction | null>;

  /**
   * Optional: the session's messages that match `query`, best first, at most `limit` (the caller checks
   * both). A hit may carry `context`: records near it that explain it (they are not hits).
   */
  search?(query: string, limit: number): Promise<StoredSearchHit[]>;
  /** Optional, with `writeCalibration`: the token calibration kept for the session (`null`: none yet). */
  readCalibration?(): Promise<number | null>;
  writeCalibration?(calibration: number): Promise<void>;
  /**
   * Optional: the length of the path root..`leafId` (`undefined`: the latest leaf) and its records' token
   * stamps summed, as a store keeps them with each record (read from the leaf, never the whole path: what a
   * new `Session`'s token estimate and `getPathLength` cost). `null` where the store does not know them for
   * this path (a record without a stamp, a total cleared by an update or delete above it): the tree then
   * reads the path. An unknown leaf or an empty session gives `{ length: 0, tokens: 0 }`.
   */
  readPathTotals?(leafId: string | undefined): Promise<PathTotals | null>;
}

/** What `readPathTotals` answers: the records of a path counted and their token stamps summed. */
export interface PathTotals {
  length: number;
  tokens: number;
}

/** One stored message: its place in the tree, its stored text, and the numbers the rules above keep on it. */
export interface MessageRecord {
  id: string;
  /** `null` for a root. */
  parentId: string | null;
  role: string;
  /** The message's stored text (the JSON the message tree writes): present on writes and on content reads. */
  content?: string;
  /** When it was stored, ISO text: given on every append; `null` only on the record `update` is given. */
  createdAt: string | null;
  /** UTF-8 bytes of `content` (given on every write; a store may return `undefined` if it does not keep it). */
  bytes?: number;
  /** The token stamp (given on every write; a store may return `undefined` if it does not keep it). */
  tokens?: number;
  /** The message's searchable text (given on writes: a store with `search` indexes it; reads may omit it). */
  text?: string;
}

/** Where `append` puts its chain, and the leaf the caller expects. */
export interface AppendPlacement {
  /** The first record's parent: `undefined` is the latest leaf, `null` a new root. */
  parentId: string | null | undefined;
  /** When given, the append is refused (`stale-leaf`) unless this is the latest leaf (`null`: empty session). */
  expectedLeafId?: string | null | undefined;
}

/** What `append` answers: stored (with the parent the first record went under), or the first conflict. */
export type AppendResult =
  | { status: "appended"; parentId: string | null }
  | { status: "stale-leaf"; leafId: string | null }
  | { status: "parent-missing"; parentId: string }
  | { status: "id-taken"; index: number; holder: IdHolder }
  | { status: "still-a-parent"; index: number };

/** The stored record that holds an id an append asked for, with its session and content. */
export interface IdHolder extends MessageRecord {
  sessionId: string;
  content: string;
}

/** A search hit as a store finds it. */
export interface StoredSearchHit {
  id: string;
  role: string;
  /** The message's searchable text. */
  text: string;
  createdAt: string | null;
  /** Records near the hit that explain it, each with its searchable text. */
  context?: { id: string; role: string; text: string }[];
  /**
   * The store's score (higher is better), read against the best of the same search: candidates far below
   * it are cut, and a neighbour match far below it becomes context (`selectSearchHits`). Omitted: no cut.
   */
  score?: number;
  /** Whether the record's own text matched or only the records around it. Omitted: `"text"`. */
  matchedBy?: "text" | "neighbours";
  /** The record's parent and grandparent, so a near-match can be shown beside the hit it explains. */
  parentId?: string | null;
  grandparentId?: string | null;
}

/** True for a store that declares this contract. */
export function isSessionStoreV1(value: unknown): value is SessionStoreV1 {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { specificationVersion?: unknown }).specificationVersion === "v1"
  );
}
