import type { MessageRecord } from "@contextblocks/sessions/store-kit";
import type { SqlRow, SqlStatement } from "@contextblocks/sql";
import type { PathRow, PlaceRow } from "./path-row.js";
import type { SessionLayout } from "./session-schema.js";

/** A record of an appended chain and its stored JSON. */
export interface InsertedLink {
  record: MessageRecord;
  content: string;
}

/**
 * What an append keeps of its chain for the next one (keyed layout): the last message's search text and its
 * parent's id, search rowid and text. `"below"`: the rowid just below the last message's (the chain's
 * previous message, stored in the same transaction).
 */
export interface ChainMemory {
  text: string;
  parentId: string | null;
  parentSeq: number | null | "below";
  parentText: string;
}

/** The session's latest leaf as read, and what an append's insert checks so that it still is. */
export interface LatestLeaf {
  /** `null`: the session has no message. */
  leaf: PlaceRow | null;
  /** True while `leaf` is still the latest leaf (its row included). */
  still: SqlStatement;
  /** The same without the leaf's own row: for an insert that reads that row as its source anyway. */
  stillAbove: SqlStatement;
  /**
   * Where it holds without reading a row, a check that `leaf` is still the latest leaf and still stored
   * (the keyed layout, when the leaf holds the largest search rowid): an append under it then reads no row
   * for its parent, its depth and path total taken from `leaf`.
   */
  current?: SqlStatement | undefined;
}

/**
 * What differs between the layouts of `assistant_messages` (session-schema.ts): how the latest leaf is
 * found and kept, how a path is walked, and the parts of an append's insert that name the order and the
 * parent. `SqliteSessionStore` holds one per layout and writes everything else once.
 */
export interface LayoutStrategy {
  readonly layout: SessionLayout;
  /** The column that orders the session's messages: `rowid`, or `seq` on the keyed layout. */
  readonly order: SqlStatement;

  /**
   * The latest leaf. Where the layout remembers one, `checked` reads whether it still holds first (a read
   * must give the leaf as it is now); unchecked it is taken as remembered, for an append whose insert checks
   * `still` anyway.
   */
  latestLeaf(checked: boolean): Promise<LatestLeaf>;
  /** The latest leaf's row as `columns` read it (alias `m`), in one statement while a remembered leaf holds. */
  latestLeafRow(columns: SqlStatement): Promise<SqlRow | null>;
  /** Forgets the remembered latest leaf (another writer changed the session, or this store did). */
  forgetLatestLeaf(): void;
  /** The path leaf first from `leaf`: at most `limit` rows, content or sizes. */
  walk(leaf: PlaceRow, limit: number, content: boolean): Promise<PathRow[]>;
  /** The depth and summed stamps of the path root..`place` (`tokens` null when a row has no stamp). */
  totalsOf(place: PlaceRow): Promise<{ depth: number; tokens: number | null }>;

  /** Columns the insert writes besides the shared ones, and their values (parent row: alias `p`). */
  readonly orderColumns: SqlStatement;
  orderValues(hasParent: boolean): SqlStatement;
  /** The insert's source row `p` is the parent `place`. */
  parentIs(place: PlaceRow): SqlStatement;
  /** The insert's source row `p` is the message the statement before stored, with this id. */
  previousIs(id: string): SqlStatement;
  /** No stored message of the session names one of `ids` as its parent (a deleted id coming back). */
  noChildrenOf(ids: readonly string[]): SqlStatement;
  /** What else the first insert checks (the layout is still this one). */
  readonly layoutStill: SqlStatement;
  /**
   * Statements that follow each insert of a chain under `parent` in the same group (the keyed layout's search
   * row), one list per link, and what `remember` keeps of the chain (the keyed layout's tail context).
   */
  afterInserts(
    links: readonly InsertedLink[],
    parent: PlaceRow | null,
  ): { statements: SqlStatement[][]; kept?: ChainMemory | undefined };
  /** The statement after the inserts whose row says whether the last stored (`stored`) and its `place`. */
  readonly outcome: SqlStatement;
  /** Statements after the outcome, run only when the chain was stored (`changes()` still the last insert's). */
  afterStored(lastId: string): SqlStatement[];
  /** Remembers the appended chain's last message as the latest leaf, where the layout remembers one. */
  remember(leaf: PlaceRow, kept?: ChainMemory): void;

  /** On a client without transactions: finishes a stored link (its search row, the leaf pointer); `false` when another writer took its place and the row was taken back. */
  finishLink(
    id: string,
    place: number,
    content: string,
    role: string,
    text: string | undefined,
  ): Promise<boolean>;
  /** True when the id is still the parent of a stored message of the session (a tombstone is cleared when not). */
  stillAParent(id: string): Promise<boolean>;
  /** True when a stored row with this id is only half there (the keyed layout's row without its search row); the row is removed. */
  dropHalfStored(id: string): Promise<boolean>;
}
