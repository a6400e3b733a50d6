import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { join, raw } from "@contextblocks/sql/store-kit";
import { type PathRow, storedBytes } from "./path-row.js";

/**
 * Messages one statement reads along a path on the keyed layout: a chain of `LEFT JOIN`s, each a
 * primary-key seek by the previous row's `parent_id`, three columns each (SQLite joins at most 64 tables;
 * a Durable Object returns at most 100 columns).
 */
const stepsPerRead = 32;

/**
 * A session's path on the keyed layout, leaf first: one primary-key seek per message by `parent_id`, so one
 * row read each (a recursive CTE reads two, the row and its queue entry), `stepsPerRead` messages per
 * statement. The table keeps no order a range read could follow. At most `limit` rows; the walk also ends
 * at a root, at a parent not stored in this session, and at a row seen before. With `content` false each
 * row's size is read instead of its text.
 */
export async function readKeyedPath(
  client: SqlClient,
  sessionId: string,
  leafId: string,
  limit: number,
  content: boolean,
): Promise<PathRow[]> {
  const rows: PathRow[] = [];
  const seen = new Set<string>();
  let next: string | null = leafId;
  while (next !== null && rows.length < limit) {
    const steps = Math.min(stepsPerRead, limit - rows.length);
    const read = (
      await client.run<Record<string, unknown>>(chainStatement(sessionId, next, steps, content))
    )[0];
    if (read === undefined) return rows;
    for (let step = 0; step < steps; step++) {
      const id = read[`i${step}`];
      if (id === null || id === undefined || seen.has(String(id))) return rows;
      const [seq, role, parentId, tokens, chunks, bytes, createdAt] = JSON.parse(
        String(read[`f${step}`]),
      ) as [number, string, string | null, number | null, number | null, number, string | null];
      seen.add(String(id));
      rows.push({
        order: seq,
        id: String(id),
        role,
        parent_id: parentId,
        tokens,
        created_at: createdAt,
        content: content ? String(read[`c${step}`]) : "",
        content_chunks: chunks,
        bytes,
      });
      next = parentId;
      if (next === null) return rows;
    }
  }
  return rows;
}

function chainStatement(sessionId: string, leafId: string, steps: number, content: boolean): SqlStatement {
  const columns: SqlStatement[] = [];
  const joins: SqlStatement[] = [];
  for (let step = 0; step < steps; step++) {
    const alias = `m${step}`;
    // Sizes only when the text is not read: measuring copies each row's text into a blob.
    const bytes = content ? raw("0") : storedBytes(alias);
    // The small fields as one JSON array; the id and the text as they are.
    columns.push(
      sql`json_array(${raw(`${alias}.seq, ${alias}.role, ${alias}.parent_id, ${alias}.tokens, ${alias}.content_chunks`)}, ${bytes}, ${raw(`${alias}.created_at`)}) AS ${raw(`f${step}, ${alias}.id AS i${step}`)}${content ? raw(`, ${alias}.content AS c${step}`) : raw("")}`,
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
