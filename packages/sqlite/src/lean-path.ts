import { ContextError } from "@contextblocks/core";
import { maximumPathLength } from "@contextblocks/sessions";
import { type SqlClient, sql } from "@contextblocks/sql";

/** A row of the path, as the store parses it. */
export interface LeanPathRow {
  rowid: number;
  id: string;
  role: string;
  parent_id: string | null;
  parent_seq: number | null;
  /** The message's token stamp, `null` on a row another writer made. */
  tokens: number | null;
  content: string;
  content_chunks: number | null;
  /** UTF-8 bytes of the stored message, continuation rows included (0 unless the read has `until`). */
  bytes: number;
}

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
 * `until(row, taken)` stops the walk early (a byte budget): the row it refuses is not taken.
 * Returns the rows leaf first and whether a parent remained when the walk stopped.
 */
export async function readLeanPath(
  client: SqlClient,
  sessionId: string,
  leaf: { id: string; rowid: number },
  until?: (row: LeanPathRow, taken: number) => boolean,
): Promise<{ rows: LeanPathRow[]; more: boolean }> {
  const rows: LeanPathRow[] = [];
  let next: { id: string; rowid: number } | null = leaf;
  let range = firstRange;
  while (next !== null) {
    // Sizes only for a budgeted read (`until`): measuring copies each row's text into a blob.
    const read: (LeanPathRow & { session_id: string })[] = await client.run(sql`
      SELECT rowid, id, session_id, role, parent_id, parent_seq, tokens, content, content_chunks,
        ${until === undefined ? sql`0` : rowBytes} AS bytes
      FROM assistant_messages WHERE rowid <= ${next.rowid} ORDER BY rowid DESC LIMIT ${range}`);
    let skipped = 0;
    let found = false;
    for (const row of read) {
      if (next === null) break;
      if (Number(row.rowid) !== next.rowid) {
        skipped++;
        continue;
      }
      if (row.id !== next.id || row.session_id !== sessionId) {
        // The parent is not where `parent_seq` says (a row written without it): found by id below.
        break;
      }
      found = true;
      // As the recursive walk of the indexed layout: at most `maximumPathLength` steps above the leaf.
      if (rows.length > maximumPathLength) return { rows, more: true };
      if (until?.(row, rows.length) === true) return { rows, more: true };
      rows.push(row);
      // By `parent_seq` without a statement (no await per message); by id for another writer's row.
      next = parentBySeq(row) ?? (await parentOf(client, sessionId, row));
    }
    if (!found && next !== null) {
      // The expected row is gone (deleted meanwhile) or moved: find the parent by id, or stop.
      const moved: { rowid: number }[] = await client.query`
        SELECT rowid FROM assistant_messages WHERE id = ${next.id} AND session_id = ${sessionId}`;
      if (moved[0] === undefined || Number(moved[0].rowid) === next.rowid) {
        return { rows, more: false };
      }
      next = { id: next.id, rowid: Number(moved[0].rowid) };
    }
    range = skipped > 0 ? Math.max(1, range >> 1) : Math.min(largestRange, range * 2);
  }
  return { rows, more: false };
}

/** UTF-8 bytes of a row's message, its continuation rows included. */
const rowBytes = sql`length(CAST(content AS BLOB)) + (CASE WHEN COALESCE(content_chunks, 0) = 0 THEN 0 ELSE (
  SELECT SUM(length(CAST(c.content AS BLOB))) FROM assistant_message_chunks c
  WHERE c.id = assistant_messages.id) END)`;

/** The parent named by `parent_seq`, `null` for a root; `undefined` when the row has no `parent_seq`. */
function parentBySeq(row: LeanPathRow): { id: string; rowid: number } | null | undefined {
  if (row.parent_id === null) return null;
  if (row.parent_seq === null || row.parent_seq === undefined) return undefined;
  if (Number(row.parent_seq) >= Number(row.rowid)) {
    throw new ContextError(
      "PROVIDER_FAILED",
      `getHistory: message "${row.id}" names a parent stored after it (rowid ${row.parent_seq}); the table was edited outside the store`,
    );
  }
  return { id: row.parent_id, rowid: Number(row.parent_seq) };
}

/** The parent of a row: by `parent_seq`, or by id for a row written without it (another writer's). */
async function parentOf(
  client: SqlClient,
  sessionId: string,
  row: LeanPathRow,
): Promise<{ id: string; rowid: number } | null> {
  if (row.parent_id === null) return null;
  if (row.parent_seq !== null && row.parent_seq !== undefined) {
    if (Number(row.parent_seq) >= Number(row.rowid)) {
      throw new ContextError(
        "PROVIDER_FAILED",
        `getHistory: message "${row.id}" names a parent stored after it (rowid ${row.parent_seq}); the table was edited outside the store`,
      );
    }
    return { id: row.parent_id, rowid: Number(row.parent_seq) };
  }
  const found: { rowid: number }[] = await client.query`
    SELECT rowid FROM assistant_messages WHERE id = ${row.parent_id} AND session_id = ${sessionId}`;
  return found[0] === undefined ? null : { id: row.parent_id, rowid: Number(found[0].rowid) };
}
