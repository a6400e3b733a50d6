import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";

/**
 * The lean and keyed layouts have no parent index to ask whether a stored message still names an id as its
 * parent. A delete remembers each id that stored messages of its session still name (a tombstone, in
 * `assistant_message_tombstones`); an append refuses a tombstoned id (storing it again could close a parent
 * cycle) until no message of the session names it any more. The probe reads no row when there is none.
 */

/** No tombstone of the session holds one of `ids`. */
export function noTombstoneFor(sessionId: string, ids: readonly string[]): SqlStatement {
  if (ids.length === 1) {
    return sql`NOT EXISTS (SELECT 1 FROM assistant_message_tombstones WHERE id = ${ids[0] ?? ""} AND session_id = ${sessionId})`;
  }
  return sql`NOT EXISTS (SELECT 1 FROM assistant_message_tombstones
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND session_id = ${sessionId})`;
}

/** A delete's tombstone for `id`, written when a stored message of the session still names it. */
export function tombstoneStatement(sessionId: string, id: string): SqlStatement {
  return sql`INSERT OR IGNORE INTO assistant_message_tombstones (session_id, id)
    SELECT ${sessionId}, ${id}
    WHERE EXISTS (SELECT 1 FROM assistant_messages WHERE parent_id = ${id} AND session_id = ${sessionId})`;
}

/**
 * True when `id` is tombstoned and a stored message of the session still names it (a scan: only when a
 * deleted id comes back). A tombstone no message needs any more is removed.
 */
export async function tombstonedParent(client: SqlClient, sessionId: string, id: string): Promise<boolean> {
  const tombstone = await client.query<{ id: string }>`
    SELECT id FROM assistant_message_tombstones WHERE id = ${id} AND session_id = ${sessionId}`;
  if (tombstone.length === 0) return false;
  const children = await client.query<{ id: string }>`
    SELECT id FROM assistant_messages WHERE parent_id = ${id} AND session_id = ${sessionId} LIMIT 1`;
  if (children.length > 0) return true;
  await client.query`DELETE FROM assistant_message_tombstones WHERE id = ${id} AND session_id = ${sessionId}`;
  return false;
}
