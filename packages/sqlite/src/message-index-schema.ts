import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { saysWhen } from "./says-when.js";
import type { SessionLayout } from "./session-schema.js";

/** The columns and tokenizer of the search table we create (`createSearchTable`). */
const searchTableShape = `fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, speaker UNINDEXED,
    parent_row UNINDEXED, grandparent_row UNINDEXED, content, context, time, says_when UNINDEXED,
    tokenize='porter unicode61')`;

/**
 * The shape of the message search table (`assistant_fts`) we create: the message's text, its context (the
 * turns before it), its day, its speaker, the rowids of its parent and grandparent and whether its text
 * says when (message-search.ts). FTS5 tables cannot be altered: a table of the shape before `says_when` is
 * copied into one of this shape (`searchTableRebuild`); one of an earlier shape of ours (a `context`
 * column, no `parent_row`) is dropped and created again, and the lazy indexer's mark goes back to 0, so the
 * next search indexes every message again (the index is derived from `assistant_messages` alone). A table
 * Cloudflare agents' Sessions API created (no `context` column) is left as it is and searched by message
 * text alone.
 */
export const createSearchTable: SqlStatement = raw(
  `CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts USING ${searchTableShape}`,
);

/**
 * The rows of a search table of our shape read from the table FTS5 keeps them in (`assistant_fts_content`:
 * `id` the rowid, `c0`, `c1`, … the columns in the order `createSearchTable` declares them), under the
 * columns' names, the rowid as `search_rowid`. A look-up by rowid there is one b-tree seek; through
 * `assistant_fts` it also opens an FTS5 cursor, which costs more than the seek.
 */
export const searchRowsTable: SqlStatement = raw(`(SELECT id AS search_rowid, c0 AS id, c1 AS session_id,
  c2 AS role, c3 AS speaker, c4 AS parent_row, c5 AS grandparent_row, c6 AS content, c8 AS time,
  c9 AS says_when FROM assistant_fts_content)`);

/**
 * The statements that bring a search table of an earlier shape of ours to this one: `before` runs ahead of
 * `createSearchTable`, `after` once the lazy indexer's mark table is there. Empty for the current shape and
 * for the table Cloudflare agents' Sessions API created.
 *
 * - Before `says_when` (with `parent_row`): every row is copied, as it is, into a table of this shape, with
 *   its `says_when` computed from its text by the expression a search would use (`saysWhen`); the rowids stay,
 *   so the keyed layout's order and every row's `parent_row` still hold. One written row per search row, once.
 * - Older (no `parent_row`; `lean` and `indexed` layouts only): dropped, and the mark goes back to 0.
 */
export async function searchTableRebuild(
  client: SqlClient,
  layout: SessionLayout,
): Promise<{ before: SqlStatement[]; after: SqlStatement[] }> {
  const columns = new Set(
    (await client.query<{ name: string }>`SELECT name FROM pragma_table_info('assistant_fts')`).map(
      (row) => row.name,
    ),
  );
  if (!columns.has("context") || columns.has("says_when")) return { before: [], after: [] };
  if (columns.has("parent_row")) {
    const kept = "rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time";
    return {
      before: [
        sql`DROP TABLE IF EXISTS assistant_fts_upgrade`,
        raw(`CREATE VIRTUAL TABLE assistant_fts_upgrade USING ${searchTableShape}`),
        sql`INSERT INTO assistant_fts_upgrade (${raw(kept)}, says_when)
          SELECT ${raw(kept)}, ${saysWhen(raw("content"))} FROM assistant_fts`,
        sql`DROP TABLE assistant_fts`,
        sql`ALTER TABLE assistant_fts_upgrade RENAME TO assistant_fts`,
      ],
      after: [],
    };
  }
  if (layout === "keyed") return { before: [], after: [] };
  return {
    before: [sql`DROP TABLE assistant_fts`],
    after: [sql`UPDATE assistant_fts_state SET indexed_rowid = 0 WHERE key = 'messages'`],
  };
}
