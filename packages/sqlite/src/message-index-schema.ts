import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";

/**
 * The shape of the message search table (`assistant_fts`) we create: the message's text, its context (the
 * turns before it), its day, its speaker and the rowids of its parent and grandparent (message-search.ts).
 * FTS5 tables cannot be altered: a table of an earlier shape of ours (a `context` column, no `parent_row`) is
 * dropped and created again, and the lazy indexer's mark goes back to 0, so the next search indexes every
 * message again (the index is derived from `assistant_messages` alone). A table Cloudflare agents' Sessions
 * API created (no `context` column) is left as it is and searched by message text alone.
 */
export const createSearchTable: SqlStatement = sql`CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts
  USING fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, speaker UNINDEXED, parent_row UNINDEXED,
    grandparent_row UNINDEXED, content, context, time, tokenize='porter unicode61')`;

/**
 * The rows of a search table of our shape read from the table FTS5 keeps them in (`assistant_fts_content`:
 * `id` the rowid, `c0`, `c1`, … the columns in the order `createSearchTable` declares them), under the
 * columns' names, the rowid as `search_rowid`. A look-up by rowid there is one b-tree seek; through
 * `assistant_fts` it also opens an FTS5 cursor, which costs more than the seek.
 */
export const searchRowsTable: SqlStatement = raw(`(SELECT id AS search_rowid, c0 AS id, c1 AS session_id,
  c2 AS role, c3 AS speaker, c4 AS parent_row, c5 AS grandparent_row, c6 AS content, c8 AS time
  FROM assistant_fts_content)`);

/**
 * The statements that rebuild a search table of an earlier shape of ours: `before` drops it (ahead of
 * `createSearchTable`), `after` sends the lazy indexer's mark back to 0. Empty for the current shape and for
 * the table Cloudflare agents' Sessions API created.
 */
export async function searchTableRebuild(
  client: SqlClient,
): Promise<{ before: SqlStatement[]; after: SqlStatement[] }> {
  const columns = new Set(
    (await client.query<{ name: string }>`SELECT name FROM pragma_table_info('assistant_fts')`).map(
      (row) => row.name,
    ),
  );
  if (!columns.has("context") || columns.has("parent_row")) return { before: [], after: [] };
  return {
    before: [sql`DROP TABLE assistant_fts`],
    after: [sql`UPDATE assistant_fts_state SET indexed_rowid = 0 WHERE key = 'messages'`],
  };
}
