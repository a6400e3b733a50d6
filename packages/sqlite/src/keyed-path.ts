import { maximumPathLength } from "@contextblocks/sessions";
import { join, raw, type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import type { LeanPathRow } from "./lean-path.js";

/**
 * Messages one statement reads along a path on the keyed layout: a chain of `LEFT JOIN`s, each a
 * primary-key seek by the previous row's `parent_id`, three columns each (SQLite joins at most 64 tables;
 * a Durable Object returns at most 100 columns).
 */
const stepsPerRead = 32;

/**
 * A session's path on the keyed layout, leaf first: one primary-key seek per message by `parent_id`, so one
 * row read each (a recursive CTE reads two, the row and its queue entry), `stepsPerRead` messages per
 * statement. The table keeps no order a range read could follow. `until(row, taken)` stops the walk early
 * (a byte budget): the row it refuses is not taken. Returns the rows leaf first and whether a parent
 * remained when the walk stopped.
 */
export async function readKeyedPath(
  client: SqlClient,
  sessionId: string,
  leafId: string,
  until?: (row: LeanPathRow, taken: number) => boolean,
): Promise<{ rows: LeanPathRow[]; more: boolean }> {
  const rows: LeanPathRow[] = [];
  let next: string | null = leafId;
  while (next !== null) {
    const read = (
      await client.run<Record<string, unknown>>(chainStatement(sessionId, next, until !== undefined))
    )[0];
    if (read === undefined) return { rows, more: false };
    for (let step = 0; step < stepsPerRead; step++) {
      if (read[`i${step}`] === null || read[`i${step}`] === undefined) return { rows, more: false };
      const [seq, role, parentId, tokens, chunks, bytes] = JSON.parse(String(read[`f${step}`])) as [
        number,
        string,
        string | null,
        number | null,
        number | null,
        number,
      ];
      const row: LeanPathRow = {
        rowid: seq,
        id: String(read[`i${step}`]),
        role,
        parent_id: parentId,
        parent_seq: null,
        tokens,
        content: String(read[`c${step}`]),
        content_chunks: chunks,
        bytes,
      };
      // As the recursive walk of the indexed layout: at most `maximumPathLength` steps above the leaf.
      if (rows.length > maximumPathLength) return { rows, more: true };
      if (until?.(row, rows.length) === true) return { rows, more: true };
      rows.push(row);
      next = row.parent_id;
      if (next === null) return { rows, more: false };
    }
  }
  return { rows, more: false };
}

function chainStatement(sessionId: string, leafId: string, measured: boolean): SqlStatement {
  const columns: SqlStatement[] = [];
  const joins: SqlStatement[] = [];
  for (let step = 0; step < stepsPerRead; step++) {
    const alias = `m${step}`;
    // Sizes only for a budgeted read: measuring copies each row's text into a blob.
    const bytes = measured ? raw(bytesOf(alias)) : raw("0");
    // The small fields as one JSON array; the id and the text as they are.
    columns.push(
      sql`json_array(${raw(`${alias}.seq, ${alias}.role, ${alias}.parent_id, ${alias}.tokens, ${alias}.content_chunks`)}, ${bytes}) AS ${raw(`f${step}, ${alias}.id AS i${step}, ${alias}.content AS c${step}`)}`,
    );
    if (step > 0) {
      joins.push(
        sql`LEFT JOIN assistant_messages ${raw(alias)} ON ${raw(`${alias}.id = m${step - 1}.parent_id`)} AND ${raw(alias)}.session_id = ${sessionId}`,
      );
    }
  }
  return sql`SELECT ${join(columns, ", ")} FROM assistant_messages m0 ${join(joins, " ", sql``)}
    WHERE m0.id = ${leafId} AND m0.session_id = ${sessionId}`;
}

/** UTF-8 bytes of a row's message, its continuation rows included. */
function bytesOf(alias: string): string {
  return `(length(CAST(${alias}.content AS BLOB)) + (CASE WHEN COALESCE(${alias}.content_chunks, 0) = 0 THEN 0 ELSE (
  SELECT SUM(length(CAST(c.content AS BLOB))) FROM assistant_message_chunks c WHERE c.id = ${alias}.id) END))`;
}
