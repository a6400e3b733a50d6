import { ContextError } from "@contextblocks/core";
import { type SqlClient, sql } from "@contextblocks/sql";
import { type PathRow, storedBytes } from "./path-row.js";

/** Rows a range read asks for first; doubled while every row read is on the path, up to `largestRange`. */
const firstRange = 32;
const largestRange = 2_048;

/**
 * The path from a leaf to its root on the lean layout, leaf first, read by ranges of `rowid` downwards
 * (one index range per read, never a recursive walk): a message's parent has a smaller rowid, and in a
 * session that does not branch, with no other session interleaved, the rows between a message and its
 * parent are none. Each read takes up to `range` rows at or below the next parent's rowid, keeps those on
 * the path (following `parent_seq`) and skips the rest; when a read skips rows the next one is halved, so
 * a branchy or shared table costs at most one range of skipped rows per parent jump. About one row read
 * per message on a linear path (a recursive CTE reads two: the row and its queue entry).
 *
 * At most `limit` rows; the walk also ends at a root, at a parent not stored in this session, and at a row
 * seen before (a loop through rows another writer made). With `content` false each row's size is read
 * instead of its text.
 */
export async function readLeanPath(
  client: SqlClient,
  sessionId: string,
  leaf: { id: string; order: number },
  limit: number,
  content: boolean,
): Promise<PathRow[]> {
  const rows: PathRow[] = [];
  const seen = new Set<string>();
  let next: { id: string; rowid: number } | null = { id: leaf.id, rowid: leaf.order };
  let range = firstRange;
  while (next !== null && rows.length < limit) {
    const read: (PathRow & { session_id: string; parent_seq: number | null })[] = await client.run(sql`
      SELECT rowid AS "order", id, session_id, role, parent_id, parent_seq, tokens, created_at,
        ${content ? sql`content` : sql`''`} AS content, content_chunks,
        ${content ? sql`0` : storedBytes("assistant_messages")} AS bytes
      FROM assistant_messages WHERE rowid <= ${next.rowid} ORDER BY rowid DESC
      LIMIT ${Math.min(range, Math.max(1, limit - rows.length))}`);
    let skipped = 0;
    let found = false;
    for (const row of read) {
      if (next === null || rows.length >= limit) break;
      if (Number(row.order) !== next.rowid) {
        skipped++;
        continue;
      }
      if (row.id !== next.id || row.session_id !== sessionId || seen.has(row.id)) {
        // The parent is not where `parent_seq` says (a row written without it): found by id below.
        break;
      }
      found = true;
      seen.add(row.id);
      rows.push(row);
      // By `parent_seq` without a statement (no await per message); by id for another writer's row.
      next = parentBySeq(row) ?? (await parentById(client, sessionId, row));
      if (next !== null && seen.has(next.id)) return rows;
    }
    if (!found && next !== null && rows.length < limit) {
      // The expected row is gone (deleted meanwhile) or moved: find the parent by id, or stop.
      const moved: { rowid: number }[] = await client.query`
        SELECT rowid FROM assistant_messages WHERE id = ${next.id} AND session_id = ${sessionId}`;
      if (moved[0] === undefined || Number(moved[0].rowid) === next.rowid) return rows;
      next = { id: next.id, rowid: Number(moved[0].rowid) };
    }
    range = skipped > 0 ? Math.max(1, range >> 1) : Math.min(largestRange, range * 2);
  }
  return rows;
}

/** The parent named by `parent_seq`, `null` for a root; `undefined` when the row has no `parent_seq`. */
function parentBySeq(
  row: PathRow & { parent_seq: number | null },
): { id: string; rowid: number } | null | undefined {
  if (row.parent_id === null) return null;
  if (row.parent_seq === null || row.parent_seq === undefined) return undefined;
  if (Number(row.parent_seq) >= Number(row.order)) {
    throw new ContextError(
      "PROVIDER_FAILED",
      `readPath: message "${row.id}" names a parent stored after it (rowid ${row.parent_seq}); the table was edited outside the store`,
    );
  }
  return { id: row.parent_id, rowid: Number(row.parent_seq) };
}

/** The parent of a row written without `parent_seq` (another writer's), by id. */
async function parentById(
  client: SqlClient,
  sessionId: string,
  row: PathRow,
): Promise<{ id: string; rowid: number } | null> {
  if (row.parent_id === null) return null;
  const found: { rowid: number }[] = await client.query`
    SELECT rowid FROM assistant_messages WHERE id = ${row.parent_id} AND session_id = ${sessionId}`;
  return found[0] === undefined ? null : { id: row.parent_id, rowid: Number(found[0].rowid) };
}
