import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { saysWhen } from "./says-when.js";
import type { SessionLayout } from "./session-schema.js";
import { rowsOf, type SqlSteps } from "./sql-steps.js";

/** The columns and tokenizer of the search table we create (`createSearchTable`). */
const searchTableShape = `fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, speaker UNINDEXED,
    parent_row UNINDEXED, grandparent_row UNINDEXED, content, context, time, says_when UNINDEXED, session_key,
    tokenize='porter unicode61')`;

/**
 * The token of a session in the search table's `session_key` column: `s`, the hex of the id's UTF-8 bytes, `z`
 * (one run of letters and digits, so one token whatever the id holds; `s`…`z` so the default session `""` is
 * `sz`, not a word of the texts). Computed in SQL, by every writer, the upgrade and the search alike, so no
 * custom function is needed (a Durable Object cannot register one) and JavaScript never has to agree with
 * SQLite on an id's bytes. FTS5 cuts a token at 32,768 bytes, on both sides alike: two ids that long with the
 * same start share a token, and the search's filter by `session_id` tells them apart.
 */
export function sessionKeyOf(sessionId: SqlStatement): SqlStatement {
  return sql`'s' || hex(${sessionId}) || 'z'`;
}

/**
 * Whether a query word could match a session token (`sessionKeyOf`): `s`, hex digits, then anything (its
 * stem, a suffix). Such a query's words are kept out of the `session_key` column (`searchWordsExpression`).
 */
export const sessionKeyLike = /^s[0-9a-f]*z/;

/**
 * The shape of the message search table (`assistant_fts`) we create: the message's text, its context (the
 * turns before it), its day, its speaker, the rowids of its parent and grandparent and whether its text
 * says when (message-search.ts), and the token of its session (`session_key`, `sessionKeyOf`: a one-session
 * search ANDs it into its MATCH, so FTS5 produces, ranks and hands over that session's matches only; bm25
 * weight 0). FTS5 tables cannot be altered: a table of the shapes before `says_when` or `session_key` is
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
 * - Before `session_key` (with `parent_row`, with or without `says_when`): every row is copied, as it is, into a
 *   table of this shape, with its session's token (`sessionKeyOf`; none for a row of no session) and, when the
 *   table had no `says_when`, that computed from its text by the expression a search would use (`saysWhen`);
 *   the rowids stay, so the keyed layout's order and every row's `parent_row` still hold. One written row per
 *   search row, once.
 * - Older (no `parent_row`; `lean` and `indexed` layouts only): dropped, and the mark goes back to 0.
 */
export function* searchTableRebuildSteps(
  layout: SessionLayout,
): SqlSteps<{ before: SqlStatement[]; after: SqlStatement[] }> {
  const columns = new Set(
    (yield* rowsOf<{ name: string }>(sql`SELECT name FROM pragma_table_info('assistant_fts')`)).map(
      (row) => row.name,
    ),
  );
  if (!columns.has("context") || columns.has("session_key")) return { before: [], after: [] };
  if (columns.has("parent_row")) {
    const kept = "rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time";
    const said = columns.has("says_when") ? raw("says_when") : saysWhen(raw("content"));
    return {
      before: [
        sql`DROP TABLE IF EXISTS assistant_fts_upgrade`,
        raw(`CREATE VIRTUAL TABLE assistant_fts_upgrade USING ${searchTableShape}`),
        sql`INSERT INTO assistant_fts_upgrade (${raw(kept)}, says_when, session_key)
          SELECT ${raw(kept)}, ${said},
            CASE WHEN session_id IS NULL THEN NULL ELSE ${sessionKeyOf(raw("session_id"))} END
          FROM assistant_fts`,
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
