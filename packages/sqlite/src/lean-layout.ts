import { type SqlClient, type SqlRow, type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import type { InsertedLink, LatestLeaf, LayoutStrategy } from "./layout-strategy.js";
import { readLeanPath } from "./lean-path.js";
import { cachedTail, currentTail, readTail, rememberTail, type Tail, tailStill } from "./lean-tail.js";
import type { PathRow, PlaceRow } from "./path-row.js";
import { leanLayoutStill } from "./session-schema.js";
import { noTombstoneFor, tombstonedParent } from "./tombstones.js";
import { walkedTotals } from "./walked-totals.js";

/**
 * The lean layout (session-schema.ts): a rowid table with only its primary key. The latest leaf is the
 * session's newest row, remembered per client and checked by the append's own conditional insert
 * (lean-tail.ts); a path is walked by `parent_seq`, the parent's rowid (lean-path.ts). An append reads the
 * parent's row as its source and writes the row and its primary-key entry: 2 rows on a Durable Object.
 */
export class LeanLayout implements LayoutStrategy {
  readonly layout = "lean";
  readonly order = raw("rowid");
  readonly orderColumns = raw(", parent_seq");
  readonly layoutStill = leanLayoutStill;
  readonly outcome = sql`SELECT changes() AS stored, last_insert_rowid() AS place`;

  readonly #client: SqlClient;
  readonly #sessionId: string;

  constructor(client: SqlClient, sessionId: string) {
    this.#client = client;
    this.#sessionId = sessionId;
  }

  async latestLeaf(checked: boolean): Promise<LatestLeaf> {
    const tail = checked
      ? await currentTail(this.#client, this.#sessionId)
      : (cachedTail(this.#client, this.#sessionId) ?? (await readTail(this.#client, this.#sessionId)));
    return {
      leaf: placeOfTail(tail),
      still: tailStill(tail, this.#sessionId),
      stillAbove: tailStill({ ...tail, leaf: null }, this.#sessionId),
    };
  }

  async latestLeafRow(columns: SqlStatement): Promise<SqlRow | null> {
    // The remembered tail's row, read only while it is still the tail (one statement, one row).
    const cached = cachedTail(this.#client, this.#sessionId);
    if (cached?.leaf !== null && cached?.leaf !== undefined) {
      const rows = await this.#client.run(sql`
        SELECT ${columns} FROM assistant_messages AS m
        WHERE m.rowid = ${cached.leaf.rowid} AND m.id = ${cached.leaf.id}
          AND ${tailStill({ ...cached, leaf: null }, this.#sessionId)}`);
      if (rows[0] !== undefined) return rows[0];
    }
    const leaf = (await readTail(this.#client, this.#sessionId)).leaf;
    if (leaf === null) return null;
    const rows = await this.#client.run(sql`
      SELECT ${columns} FROM assistant_messages AS m WHERE m.rowid = ${leaf.rowid}`);
    return rows[0] ?? null;
  }

  forgetLatestLeaf(): void {
    rememberTail(this.#client, this.#sessionId, undefined);
  }

  walk(leaf: PlaceRow, limit: number, content: boolean): Promise<PathRow[]> {
    return readLeanPath(this.#client, this.#sessionId, leaf, limit, content);
  }

  totalsOf(place: PlaceRow): Promise<{ depth: number; tokens: number | null }> {
    return walkedTotals(this, place);
  }

  orderValues(hasParent: boolean): SqlStatement {
    return hasParent ? sql`, p.rowid` : sql`, NULL`;
  }

  parentIs(place: PlaceRow): SqlStatement {
    return sql`p.rowid = ${place.order} AND p.id = ${place.id}`;
  }

  previousIs(id: string): SqlStatement {
    return sql`p.rowid = last_insert_rowid() AND p.id = ${id}`;
  }

  noChildrenOf(ids: readonly string[]): SqlStatement {
    return noTombstoneFor(this.#sessionId, ids);
  }

  afterInserts(links: readonly InsertedLink[]): { statements: SqlStatement[][] } {
    return { statements: links.map(() => []) };
  }

  afterStored(): SqlStatement[] {
    return [];
  }

  remember(leaf: PlaceRow): void {
    // Children are inserted after their parents: the newest row is the leaf, and the table's largest rowid.
    rememberTail(this.#client, this.#sessionId, {
      leaf: { id: leaf.id, rowid: leaf.order, depth: leaf.depth, pathTokens: leaf.pathTokens },
      horizon: leaf.order,
    });
  }

  async finishLink(): Promise<boolean> {
    return true;
  }

  stillAParent(id: string): Promise<boolean> {
    return tombstonedParent(this.#client, this.#sessionId, id);
  }

  async dropHalfStored(): Promise<boolean> {
    return false;
  }
}

function placeOfTail(tail: Tail): PlaceRow | null {
  const leaf = tail.leaf;
  return leaf === null
    ? null
    : { id: leaf.id, order: leaf.rowid, depth: leaf.depth, pathTokens: leaf.pathTokens };
}
