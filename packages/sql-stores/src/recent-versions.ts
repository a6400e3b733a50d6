import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw, type SqlDialect } from "@contextblocks/sql/store-kit";

/**
 * Recent versions kept in the block's own row, so a write with versions writes one row.
 *
 * `cf_agents_context_blocks.history_recent` (a column `agents/context` never reads) holds the block's newest
 * versions as a JSON array of `[version, content, source, written_at]`, oldest first; the write that
 * changes the content appends its version in the same statement. Once it holds `RECENT_BATCH` versions, the
 * next write first copies the whole array into one row of `contextblocks_block_history_batches` and starts
 * the array again: one extra row written every `RECENT_BATCH` writes.
 *
 * The batches are a ring too: a batch whose newest version is `last` goes to slot
 * `floor(last / RECENT_BATCH) % slots`, with `slots = ceil(retention / RECENT_BATCH) + 1`. A batch is only
 * ever overwritten by one whose newest version is at least `(slots - 1) * RECENT_BATCH` newer, so every
 * version among the newest `retention` stays in the row or in a batch.
 */
export const RECENT_BATCH = 16;

/** The column of `cf_agents_context_blocks` that holds the recent versions. */
export const RECENT_COLUMN = "history_recent";

/** The table the recent versions move to, a batch per row. */
export const BATCHES_TABLE_NAME = "contextblocks_block_history_batches";

/**
 * Content longer than this (in UTF-16 units) is versioned as before, in its own slot of
 * `contextblocks_block_history` (two rows written), so the row never holds many copies of a large text: even
 * two batches of versions whose every character JSON escapes to six bytes stay under 1.6 MB, below a
 * Durable Object's 2 MB row.
 */
export const RECENT_CONTENT_LIMIT = 8 * 1024;

/** The number of batch slots a block keeps for `retention` versions. */
export function batchSlots(retention: number): number {
  return Math.ceil(retention / RECENT_BATCH) + 1;
}

const SQLITE_NOW = raw("strftime('%Y-%m-%dT%H:%M:%fZ', 'now')");

/**
 * SQLite: the statement that moves a full array of recent versions to its batch slot (writes nothing while
 * the array holds fewer than `RECENT_BATCH`). Run in the same transaction just before a write, whose
 * `recentAfterFlush` then starts the array again.
 */
export function flushRecent(key: string, retention: number): SqlStatement {
  const slots = batchSlots(retention);
  return sql`INSERT INTO contextblocks_block_history_batches (label, slot, last_version, versions)
SELECT label, (json_extract(history_recent, '$[#-1][0]') / ${RECENT_BATCH}) % ${slots},
  json_extract(history_recent, '$[#-1][0]'), history_recent
FROM cf_agents_context_blocks WHERE label = ${key} AND json_array_length(history_recent) >= ${RECENT_BATCH}
ON CONFLICT(label, slot) DO UPDATE SET last_version = excluded.last_version, versions = excluded.versions`;
}

/**
 * The new value of `history_recent` in a write that raises the row's version (old values of the row on the
 * right-hand side): the new version (its text: `content`, an expression) appended, to an empty array when `flushed` (the flush ran just before,
 * in the same transaction, and copied a full array). `block` is the alias of the row being written.
 */
export function appendRecent(
  dialect: SqlDialect,
  content: SqlStatement,
  source: string,
  flushed: boolean | SqlStatement,
): SqlStatement {
  if (dialect === "sqlite") {
    const start = flushed
      ? sql`CASE WHEN json_array_length(block.history_recent) >= ${RECENT_BATCH} THEN '[]' ELSE coalesce(block.history_recent, '[]') END`
      : sql`coalesce(block.history_recent, '[]')`;
    return sql`json_insert(${start}, '$[#]', json_array(block.history_version + 1, ${content}, json(${source}), ${SQLITE_NOW}))`;
  }
  // Postgres (the source cast from text: postgres.js would send a string typed jsonb as a JSON string):
  // `flushed` is the newest version the flush copied (a subquery, NULL when it copied nothing);
  // a version a concurrent writer appended since keeps the array whole (the next batch holds both).
  const start =
    typeof flushed === "object"
      ? sql`CASE WHEN (block.history_recent->-1->>0)::bigint <= (${flushed}) THEN '[]'::jsonb ELSE coalesce(block.history_recent, '[]'::jsonb) END`
      : sql`coalesce(block.history_recent, '[]'::jsonb)`;
  return sql`${start} || jsonb_build_array(jsonb_build_array(block.history_version + 1, ${content}, (${source})::text::jsonb, NOW()))`;
}

/** The first array of a new row: version 1. */
export function firstRecent(dialect: SqlDialect, content: string, source: string): SqlStatement {
  return dialect === "sqlite"
    ? sql`json_array(json_array(1, ${content}, json(${source}), ${SQLITE_NOW}))`
    : sql`jsonb_build_array(jsonb_build_array(1, (${content})::text, (${source})::text::jsonb, NOW()))`;
}

/** Postgres: the CTE that moves a full array to its slot, returning the newest version it copied. */
export function flushRecentPostgres(key: string, retention: number): SqlStatement {
  const slots = batchSlots(retention);
  return sql`INSERT INTO contextblocks_block_history_batches (label, slot, last_version, versions)
  SELECT label, (((history_recent->-1->>0)::bigint / ${RECENT_BATCH}) % ${slots})::int,
    (history_recent->-1->>0)::bigint, history_recent
  FROM cf_agents_context_blocks WHERE label = ${key} AND jsonb_array_length(history_recent) >= ${RECENT_BATCH}
  ON CONFLICT (label, slot) DO UPDATE SET last_version = excluded.last_version, versions = excluded.versions
  RETURNING last_version`;
}

/** One kept version as stored in the row or a batch. */
export interface RecentEntry {
  version: number;
  content: string;
  source: string;
  written_at: string;
}

/** The entries of a `history_recent` or batch value (JSON text on SQLite, parsed JSON on Postgres). */
export function recentEntries(value: unknown): RecentEntry[] {
  if (value === null || value === undefined) return [];
  const parsed: unknown = typeof value === "string" ? JSON.parse(value) : value;
  if (!Array.isArray(parsed)) return [];
  const entries: RecentEntry[] = [];
  for (const item of parsed) {
    if (!Array.isArray(item)) continue;
    const [version, content, source, writtenAt] = item as unknown[];
    entries.push({
      version: Number(version),
      content: String(content),
      source: JSON.stringify(source),
      written_at: String(writtenAt),
    });
  }
  return entries;
}

/**
 * A write with versions kept in the row: `set` (`expected` undefined: an upsert that writes nothing when the
 * content is unchanged) or `setIf` (only over `expected`; an absent row counts as `""`). The statement at
 * `applied` returns one row: on SQLite `{ applied }` (`changes()`, above 0 when the write happened), on
 * Postgres `{ recent }` exactly when it happened. With `flush` (always on Postgres, one statement) a full
 * array moves to its batch first, in the same transaction (`flushed`: its index on SQLite). No `RETURNING`
 * on SQLite: on a Durable Object it reads a row more.
 */
export function writeWithRecent(
  dialect: SqlDialect,
  key: string,
  content: string,
  expected: string | undefined,
  source: string,
  retention: number,
  flush: boolean,
): { statements: SqlStatement[]; applied: number; flushed: number | undefined } {
  const sqlite = dialect === "sqlite";
  const now = sqlite ? sql`CURRENT_TIMESTAMP` : sql`NOW()`;
  const flushed: boolean | SqlStatement = sqlite ? flush : sql`SELECT last_version FROM flushed`;
  const returning = sqlite ? sql`` : sql` RETURNING jsonb_array_length(history_recent) AS recent`;
  const conflict = sqlite ? sql`ON CONFLICT(label)` : sql`ON CONFLICT (label)`;
  let write: SqlStatement;
  if (expected !== undefined && expected !== "") {
    write = sql`UPDATE cf_agents_context_blocks AS block SET content = ${content}, updated_at = ${now},
  history_version = block.history_version + 1,
  history_recent = ${appendRecent(dialect, sqlite ? sql`${content}` : sql`(${content})::text`, source, flushed)}
WHERE label = ${key} AND content = ${expected}${returning}`;
  } else {
    const unchanged =
      expected === ""
        ? sql`block.content = ''`
        : sqlite
          ? sql`block.content IS NOT excluded.content`
          : sql`block.content IS DISTINCT FROM excluded.content`;
    write = sql`INSERT INTO cf_agents_context_blocks AS block (label, content, history_version, history_recent)
VALUES (${key}, ${content}, 1, ${firstRecent(dialect, content, source)})
${conflict} DO UPDATE SET content = excluded.content, updated_at = ${now},
  history_version = block.history_version + 1,
  history_recent = ${appendRecent(dialect, sql`excluded.content`, source, flushed)}
WHERE ${unchanged}${returning}`;
  }
  if (!sqlite) {
    return {
      statements: [
        sql`WITH flushed AS (${flushRecentPostgres(key, retention)}), written AS (${write})
SELECT recent FROM written`,
      ],
      applied: 0,
      flushed: undefined,
    };
  }
  const applied = sql`SELECT changes() AS applied`;
  return flush
    ? {
        statements: [flushRecent(key, retention), write, applied],
        applied: 2,
        flushed: 0,
      }
    : { statements: [write, applied], applied: 1, flushed: undefined };
}
