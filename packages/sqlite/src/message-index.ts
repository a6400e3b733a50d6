import { parseStoredMessage } from "@contextblocks/sessions";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { indexedMessageOf } from "./message-index-text.js";
import { hasContextColumn, indexRowStatement } from "./message-search.js";

/**
 * The message search index (`assistant_fts`) is built lazily: an append writes no search row (on a Durable
 * Object each one is billed, and rows written cost 1,000× rows read). A search first indexes the messages
 * past the high-water mark (`assistant_fts_state.indexed_rowid`: every message with a lower `rowid` is
 * indexed), in batches, each batch one transaction that replaces the FTS rows of its range and moves the
 * mark; a batch cut short is redone whole by the next search, so the index never holds a message twice or
 * misses one, even on a client without transactions.
 *
 * Each message's row is written once: its context is the turns before it, read from its ancestors' rows
 * (indexed before it, in rowid order); the turns after it are counted at query time (message-search.ts), so
 * no older row is rewritten when its replies arrive.
 */
export const indexBatchSize = 200;

interface PendingRow {
  rowid: number;
  id: string;
  session_id: string;
  role: string;
  content: string;
  content_chunks: number | null;
}

export async function catchUpMessageIndex(client: SqlClient): Promise<void> {
  for (;;) {
    const state = await client.query<{ indexed_rowid: number }>`
      SELECT indexed_rowid FROM assistant_fts_state WHERE key = 'messages'`;
    const mark = Number(state[0]?.indexed_rowid ?? 0);
    const rows = await client.query<PendingRow>`
      SELECT rowid, id, session_id, role, content, content_chunks FROM assistant_messages
      WHERE rowid > ${mark} ORDER BY rowid ASC LIMIT ${indexBatchSize}`;
    const last = rows.at(-1);
    if (last === undefined) return;
    const continued = await readContinuations(
      client,
      rows.filter((row) => Number(row.content_chunks ?? 0) > 0).map((row) => row.id),
    );
    const withContext = await hasContextColumn(client);
    const statements: SqlStatement[] = withContext
      ? // By rowid, one statement each: FTS5 answers a rowid range by reading every row it holds.
        rows.map((row) => sql`DELETE FROM assistant_fts WHERE rowid = ${row.rowid}`)
      : [
          // A table Cloudflare agents' Sessions API created may hold, in this range, the row of a message it
          // re-indexed under the next free rowid: only this batch's messages' rows are replaced.
          sql`DELETE FROM assistant_fts WHERE rowid > ${mark} AND rowid <= ${last.rowid}
            AND id IN (SELECT value FROM json_each(${JSON.stringify(rows.map((row) => row.id))}))`,
        ];
    for (const row of rows) {
      const message = parseStoredMessage(row.content + (continued.get(row.id) ?? ""));
      const indexed = message === null ? null : indexedMessageOf(message);
      if (indexed === null || indexed.text.length === 0) continue;
      statements.push(indexRowStatement(Number(row.rowid), indexed, withContext));
    }
    statements.push(sql`UPDATE assistant_fts_state SET indexed_rowid = ${last.rowid}
      WHERE key = 'messages' AND indexed_rowid = ${mark}`);
    await client.batch(statements);
    if (rows.length < indexBatchSize) return;
  }
}

/** Continuation slices of the given messages, joined in order, keyed by id. */
export async function readContinuations(
  client: SqlClient,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const joined = new Map<string, string>();
  if (ids.length === 0) return joined;
  const rows = await client.query<{ id: string; content: string }>`
    SELECT id, content FROM assistant_message_chunks
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) ORDER BY id ASC, idx ASC`;
  for (const row of rows) joined.set(row.id, (joined.get(row.id) ?? "") + row.content);
  return joined;
}
