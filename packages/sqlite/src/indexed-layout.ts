import { type SqlClient, type SqlRow, type SqlStatement, sql } from "@contextblocks/sql";
import { isReadOnlyRefusal, raw } from "@contextblocks/sql/store-kit";
import type { InsertedLink, LatestLeaf, LayoutStrategy } from "./layout-strategy.js";
import type { PathRow, PlaceRow } from "./path-row.js";
import { storedBytes, wholeNumber } from "./path-row.js";

interface LeafRow {
  id: string;
  order: number;
  depth: number | null;
  path_tokens: number | null;
}

/**
 * The indexed layout: the tables as agents@0.22.0 (and contextblocks before the lean layout) created them,
 * with the parent and session indexes. The latest leaf is the `assistant_leaves` pointer while it names a
 * childless message of the session, else the newest childless message (found by a scan, then pointed at);
 * a path is one recursive statement along the parent index; an id that stored messages still name is found
 * through that index. An append writes the row, its index entries and the pointer: 5 rows on a Durable Object.
 */
export class IndexedLayout implements LayoutStrategy {
  readonly layout = "indexed";
  readonly order = raw("rowid");
  readonly orderColumns = raw("");
  readonly layoutStill = sql`1`;
  readonly outcome = sql`SELECT changes() AS stored, last_insert_rowid() AS place`;

  readonly #client: SqlClient;
  readonly #sessionId: string;

  constructor(client: SqlClient, sessionId: string) {
    this.#client = client;
    this.#sessionId = sessionId;
  }

  async latestLeaf(): Promise<LatestLeaf> {
    // Nothing remembered: the pointer is read every time, so it is always checked.
    const row = await this.#latestLeaf();
    const leaf = row === null ? null : placeOf(row);
    if (leaf === null) {
      const empty = sql`NOT EXISTS (SELECT 1 FROM assistant_messages WHERE session_id = ${this.#sessionId})`;
      return { leaf, still: empty, stillAbove: empty };
    }
    // Still childless, and still the one the pointer names (no other branch got a newer leaf).
    const above = sql`NOT EXISTS (SELECT 1 FROM assistant_messages INDEXED BY idx_assistant_msg_parent
        WHERE parent_id = ${leaf.id} AND session_id = ${this.#sessionId})
      AND COALESCE((SELECT leaf_id FROM assistant_leaves WHERE session_id = ${this.#sessionId}), ${leaf.id}) = ${leaf.id}`;
    return {
      leaf,
      still: sql`${above} AND EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${leaf.id} AND session_id = ${this.#sessionId})`,
      stillAbove: above,
    };
  }

  async latestLeafRow(columns: SqlStatement): Promise<SqlRow | null> {
    const leaf = await this.#latestLeaf();
    if (leaf === null) return null;
    const rows = await this.#client.run(sql`
      SELECT ${columns} FROM assistant_messages AS m WHERE m.id = ${leaf.id} AND m.session_id = ${this.#sessionId}`);
    return rows[0] ?? null;
  }

  forgetLatestLeaf(): void {
    // Nothing is remembered: the pointer row is read every time.
  }

  /** The path root..leaf in one statement, leaf first; ordered here, not by an SQL sorter. */
  async walk(leaf: PlaceRow, limit: number, content: boolean): Promise<PathRow[]> {
    const rows = await this.#client.run<PathRow & { step: number }>(sql`
      WITH RECURSIVE path(id, parent_id, step) AS (
        SELECT id, parent_id, 0 FROM assistant_messages WHERE id = ${leaf.id} AND session_id = ${this.#sessionId}
        UNION ALL
        SELECT m.id, m.parent_id, p.step + 1 FROM assistant_messages m JOIN path p ON m.id = p.parent_id
          WHERE +m.session_id = ${this.#sessionId} AND p.step + 1 < ${limit}
      )
      SELECT m.rowid AS "order", m.id AS id, m.role AS role, m.parent_id AS parent_id, m.tokens AS tokens,
        m.created_at AS created_at, ${content ? sql`m.content` : sql`''`} AS content,
        m.content_chunks AS content_chunks, ${content ? sql`0` : storedBytes("m")} AS bytes, path.step AS step
      FROM path CROSS JOIN assistant_messages m ON m.id = path.id`);
    rows.sort((left, right) => left.step - right.step);
    // A row seen again (a loop through rows another writer made) ends the path.
    const seen = new Set<string>();
    const path: PathRow[] = [];
    for (const row of rows) {
      if (seen.has(row.id)) break;
      seen.add(row.id);
      path.push(row);
    }
    return path;
  }

  /** One statement: a loop through the rows ends where it closes (`UNION` keeps each row once). */
  async totalsOf(place: PlaceRow): Promise<{ depth: number; tokens: number | null }> {
    const rows = await this.#client.run<{ count: number; tokens: number | null; unstamped: number }>(sql`
      WITH RECURSIVE path(id, parent_id) AS (
        SELECT id, parent_id FROM assistant_messages WHERE id = ${place.id} AND session_id = ${this.#sessionId}
        UNION
        SELECT m.id, m.parent_id FROM assistant_messages m JOIN path p ON m.id = p.parent_id
          WHERE +m.session_id = ${this.#sessionId}
      )
      SELECT COUNT(*) AS count, SUM(m.tokens) AS tokens, SUM(m.tokens IS NULL) AS unstamped
      FROM path CROSS JOIN assistant_messages m ON m.id = path.id`);
    const row = rows[0];
    const count = Number(row?.count ?? 0);
    return {
      depth: Math.max(0, count - 1),
      tokens: Number(row?.unstamped ?? 0) > 0 ? null : (wholeNumber(row?.tokens) ?? 0),
    };
  }

  orderValues(): SqlStatement {
    return sql``;
  }

  parentIs(place: PlaceRow): SqlStatement {
    return sql`p.id = ${place.id} AND p.session_id = ${this.#sessionId}`;
  }

  previousIs(id: string): SqlStatement {
    return sql`p.id = ${id} AND p.session_id = ${this.#sessionId}`;
  }

  noChildrenOf(ids: readonly string[]): SqlStatement {
    const named =
      ids.length === 1
        ? sql`parent_id = ${ids[0] ?? ""}`
        : sql`parent_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
    return sql`NOT EXISTS (SELECT 1 FROM assistant_messages INDEXED BY idx_assistant_msg_parent
      WHERE ${named} AND session_id = ${this.#sessionId})`;
  }

  afterInserts(links: readonly InsertedLink[]): { statements: SqlStatement[][] } {
    return { statements: links.map(() => []) };
  }

  afterStored(lastId: string): SqlStatement[] {
    // The pointer moves with the chain, in the same transaction (`changes()`: the last insert's).
    return [
      sql`INSERT INTO assistant_leaves (session_id, leaf_id) SELECT ${this.#sessionId}, ${lastId} WHERE changes() = 1
        ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`,
    ];
  }

  remember(): void {
    // The pointer row is the memory.
  }

  async finishLink(id: string): Promise<boolean> {
    await this.#client.query`
      INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (${this.#sessionId}, ${id})
      ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`;
    return true;
  }

  async stillAParent(id: string): Promise<boolean> {
    const children = await this.#client.query<{ id: string }>`
      SELECT id FROM assistant_messages INDEXED BY idx_assistant_msg_parent
      WHERE parent_id = ${id} AND session_id = ${this.#sessionId} LIMIT 1`;
    return children.length > 0;
  }

  async dropHalfStored(): Promise<boolean> {
    return false;
  }

  /**
   * The latest leaf: the pointer row when it still names a childless message of this session (two indexed
   * reads), else the newest childless message found by a scan of the session, which is then pointed at.
   * The scan only runs on data another writer changed (or the first time on a database `agents` wrote).
   */
  async #latestLeaf(): Promise<LeafRow | null> {
    const pointed = await this.#client.query<LeafRow>`
      SELECT m.id AS id, m.rowid AS "order", m.depth AS depth, m.path_tokens AS path_tokens FROM assistant_leaves l
      JOIN assistant_messages m ON m.id = l.leaf_id AND m.session_id = l.session_id
      WHERE l.session_id = ${this.#sessionId}
        AND NOT EXISTS (SELECT 1 FROM assistant_messages c INDEXED BY idx_assistant_msg_parent
          WHERE c.parent_id = m.id AND c.session_id = m.session_id)`;
    if (pointed[0] !== undefined) return pointed[0];
    const found = await this.#client.query<LeafRow>`
      SELECT m.id AS id, m.rowid AS "order", m.depth AS depth, m.path_tokens AS path_tokens FROM assistant_messages m
      WHERE m.session_id = ${this.#sessionId}
        AND NOT EXISTS (SELECT 1 FROM assistant_messages c INDEXED BY idx_assistant_msg_parent
          WHERE c.parent_id = m.id AND c.session_id = m.session_id)
      ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1`;
    const leaf = found[0] ?? null;
    if (leaf !== null) {
      try {
        await this.#client.query`
          INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (${this.#sessionId}, ${leaf.id})
          ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`;
      } catch (error) {
        // The pointer only spares the next read this scan: a database that only reads scans each time.
        if (!isReadOnlyRefusal(error)) throw error;
      }
    }
    return leaf;
  }
}

function placeOf(row: LeafRow): PlaceRow {
  return {
    id: row.id,
    order: Number(row.order),
    depth: wholeNumber(row.depth),
    pathTokens: wholeNumber(row.path_tokens),
  };
}
