import { type SqlClient, type SqlRow, type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { readKeyedPath } from "./keyed-path.js";
import {
  cachedKeyedTail,
  currentKeyedTail,
  type KeyedTail,
  keyedTailStill,
  largestSeq,
  readKeyedTail,
  rememberKeyedTail,
} from "./keyed-tail.js";
import type { ChainMemory, InsertedLink, LatestLeaf, LayoutStrategy } from "./layout-strategy.js";
import { indexedJsonOf } from "./message-index-text.js";
import { keyedRowFromContext, keyedRowStatement } from "./message-search.js";
import type { PathRow, PlaceRow } from "./path-row.js";
import { noTombstoneFor, tombstonedParent } from "./tombstones.js";
import { walkedTotals } from "./walked-totals.js";

/**
 * The keyed layout (session-schema.ts): `assistant_messages` keyed by id alone (`WITHOUT ROWID`), ordered by
 * `seq`, the rowid of each message's search row, which the append writes in the same transaction
 * (keyed-tail.ts). An append writes the message's row and its search row: 2 rows on a Durable Object. A
 * path is walked by primary-key seeks along `parent_id` (keyed-path.ts).
 */
export class KeyedLayout implements LayoutStrategy {
  readonly layout = "keyed";
  readonly order = raw("seq");
  readonly orderColumns = raw(", seq");
  readonly layoutStill = sql`1`;
  readonly outcome = sql`SELECT changes() AS stored, ${largestSeq} AS place`;

  readonly #client: SqlClient;
  readonly #sessionId: string;

  constructor(client: SqlClient, sessionId: string) {
    this.#client = client;
    this.#sessionId = sessionId;
  }

  async latestLeaf(checked: boolean): Promise<LatestLeaf> {
    const tail = checked
      ? await currentKeyedTail(this.#client, this.#sessionId)
      : (cachedKeyedTail(this.#client, this.#sessionId) ??
        (await readKeyedTail(this.#client, this.#sessionId)));
    const above = keyedTailStill(tail);
    return {
      leaf: placeOfTail(tail),
      // Deleting the leaf below another session's newest message leaves the largest seq as it was.
      still:
        tail.leaf === null
          ? above
          : sql`${above} AND EXISTS (SELECT 1 FROM assistant_messages
              WHERE id = ${tail.leaf.id} AND session_id = ${this.#sessionId})`,
      stillAbove: above,
      // The leaf holds the largest search rowid, which every append and delete moves: unmoved, the leaf
      // is still stored and still the latest (searchOrderBump).
      current: tail.leaf !== null && tail.leaf.seq === tail.horizon ? above : undefined,
    };
  }

  async latestLeafRow(columns: SqlStatement): Promise<SqlRow | null> {
    // The remembered tail's row, read only while it is still the tail (one statement, one row).
    const cached = cachedKeyedTail(this.#client, this.#sessionId);
    if (cached?.leaf !== null && cached?.leaf !== undefined) {
      const rows = await this.#client.run(sql`
        SELECT ${columns} FROM assistant_messages AS m
        WHERE m.id = ${cached.leaf.id} AND m.session_id = ${this.#sessionId} AND ${keyedTailStill(cached)}`);
      if (rows[0] !== undefined) return rows[0];
    }
    const leaf = (await readKeyedTail(this.#client, this.#sessionId)).leaf;
    if (leaf === null) return null;
    const rows = await this.#client.run(sql`
      SELECT ${columns} FROM assistant_messages AS m WHERE m.id = ${leaf.id} AND m.session_id = ${this.#sessionId}`);
    return rows[0] ?? null;
  }

  forgetLatestLeaf(): void {
    rememberKeyedTail(this.#client, this.#sessionId, undefined);
  }

  walk(leaf: PlaceRow, limit: number, content: boolean): Promise<PathRow[]> {
    return readKeyedPath(this.#client, this.#sessionId, leaf.id, limit, content);
  }

  totalsOf(place: PlaceRow): Promise<{ depth: number; tokens: number | null }> {
    return walkedTotals(this, place);
  }

  orderValues(): SqlStatement {
    return sql`, ${largestSeq} + 1`;
  }

  parentIs(place: PlaceRow): SqlStatement {
    return sql`p.id = ${place.id} AND p.session_id = ${this.#sessionId}`;
  }

  previousIs(id: string): SqlStatement {
    return sql`p.id = ${id} AND p.session_id = ${this.#sessionId}`;
  }

  noChildrenOf(ids: readonly string[]): SqlStatement {
    return noTombstoneFor(this.#sessionId, ids);
  }

  /**
   * Each message's search row, under its seq, written only when its insert stored it. When the chain goes
   * under the remembered leaf whose context is known (or is a new root), the rows are written from what the
   * append knows (the leaf's text, its parent's; each next message's parent is the one before it), reading
   * no row; otherwise each row reads its context from its ancestors' rows.
   */
  afterInserts(
    links: readonly InsertedLink[],
    parent: PlaceRow | null,
  ): { statements: SqlStatement[][]; kept?: ChainMemory } {
    const tail = cachedKeyedTail(this.#client, this.#sessionId);
    const fromRows = () => ({
      statements: links.map(({ record, content }) => [
        keyedRowStatement(this.#sessionId, record.id, indexedJsonOf(content, record.role, record.text), {
          afterInsert: true,
        }),
      ]),
    });
    let turn: Turn;
    let turnBefore: Turn;
    if (parent === null) {
      turn = noTurn;
      turnBefore = noTurn;
    } else if (tail?.leaf?.id === parent.id && tail.context !== undefined) {
      turn = { id: parent.id, row: tail.leaf.seq, text: tail.context.text };
      turnBefore = { id: tail.context.parentId, row: tail.context.parentSeq, text: tail.context.parentText };
    } else {
      return fromRows();
    }
    const statements: SqlStatement[][] = [];
    for (const { record, content } of links) {
      const indexed = indexedJsonOf(content, record.role, record.text);
      statements.push([
        keyedRowFromContext(this.#sessionId, record.id, record.role, indexed, record.createdAt ?? null, {
          parentRow: rowOf(turn.row),
          parentText: turn.text,
          grandparentRow: rowOf(turnBefore.row),
          grandparentText: turnBefore.text,
        }),
      ]);
      // The next message's parent is this one, the largest search rowid when its row is written.
      turnBefore = turn.row === "largest" ? { ...turn, row: "below" } : turn;
      turn = { id: record.id, row: "largest", text: indexed.text };
    }
    const below = turnBefore.row;
    return {
      statements,
      kept: {
        text: turn.text,
        parentId: turnBefore.id,
        parentSeq: below === "largest" ? null : below,
        parentText: turnBefore.text,
      },
    };
  }

  afterStored(): SqlStatement[] {
    return [];
  }

  remember(leaf: PlaceRow, kept?: ChainMemory): void {
    rememberKeyedTail(this.#client, this.#sessionId, {
      leaf: { id: leaf.id, seq: leaf.order, depth: leaf.depth, pathTokens: leaf.pathTokens },
      horizon: leaf.order,
      context:
        kept === undefined
          ? undefined
          : { ...kept, parentSeq: kept.parentSeq === "below" ? leaf.order - 1 : kept.parentSeq },
    });
  }

  /**
   * On a client without transactions another writer may run between the insert and the search row and
   * take the same `seq` (its check read the same largest rowid): the one whose search row is written keeps
   * it, the other takes its row back and reads the tail again, so the two never fork.
   */
  async finishLink(id: string, place: number, content: string, role: string, text: string | undefined) {
    await this.#client.run(keyedRowStatement(this.#sessionId, id, indexedJsonOf(content, role, text)));
    const ordered = await this.#client.run(sql`
      SELECT 1 FROM assistant_fts WHERE rowid = ${place} AND id = ${id}`);
    if (ordered.length > 0) return true;
    await this.#client.run(sql`DELETE FROM assistant_messages WHERE id = ${id} AND seq = ${place}`);
    this.forgetLatestLeaf();
    return false;
  }

  stillAParent(id: string): Promise<boolean> {
    return tombstonedParent(this.#client, this.#sessionId, id);
  }

  /**
   * A message row without its search row was never appended (its append failed between the two statements
   * on a client without transactions, or lost its `seq` to another writer): it is removed, with its
   * continuation rows, so the retry appends it under the tail as it is now.
   */
  async dropHalfStored(id: string): Promise<boolean> {
    const removed = await this.#client.run(sql`
      DELETE FROM assistant_messages WHERE id = ${id} AND NOT EXISTS (SELECT 1 FROM assistant_fts f
        WHERE f.rowid = assistant_messages.seq AND f.id = assistant_messages.id) RETURNING id`);
    if (removed.length === 0) return false;
    await this.#client.query`DELETE FROM assistant_message_chunks WHERE id = ${id}`;
    return true;
  }
}

/**
 * A turn before a message, as its append knows it: a search rowid (`"largest"`: the message stored just
 * before in the same transaction; `"below"`: the one before that), its id and text.
 */
interface Turn {
  id: string | null;
  row: number | null | "largest" | "below";
  text: string;
}

const noTurn: Turn = { id: null, row: null, text: "" };

function rowOf(row: Turn["row"]): number | null | SqlStatement {
  return row === "largest" ? largestSeq : row === "below" ? sql`(${largestSeq} - 1)` : row;
}

function placeOfTail(tail: KeyedTail): PlaceRow | null {
  const leaf = tail.leaf;
  return leaf === null
    ? null
    : { id: leaf.id, order: leaf.seq, depth: leaf.depth, pathTokens: leaf.pathTokens };
}
