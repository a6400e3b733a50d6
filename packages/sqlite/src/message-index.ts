import { parseStoredMessage } from "@contextblocks/sessions/store-kit";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { databaseOf, isReadOnlyRefusal, join, limitLiteral, raw } from "@contextblocks/sql/store-kit";
import { indexedMessageOf } from "./message-index-text.js";
import { contextColumnSteps, indexRowStatement } from "./message-search.js";
import { groupOf, rowsOf, runSteps, type SqlSteps } from "./sql-steps.js";

/**
 * The message search index (`assistant_fts`) of the lean and indexed layouts is built behind the appends: an
 * append writes no search row of its own, and every 8th append to the database indexes the messages not indexed
 * yet in one batch (`countUnindexed`). A search first indexes the messages
 * past the high-water mark (`assistant_fts_state.indexed_rowid`: every message with a lower `rowid` is
 * indexed) that have no search row yet, in batches, each batch one transaction that replaces the FTS rows of
 * its messages (and moves the mark every `markStride` messages); a batch cut short is finished by the next
 * search, so the index never holds a message twice or misses one, even on a client without transactions. A
 * row is written only while its message is stored as the batch read it (`storedAsRead`): one another writer
 * changed in between is left, below no mark, to the next catch-up.
 *
 * Each message's row is written once: its context is the turns before it, read from its ancestors' rows
 * (indexed before it, in rowid order); the turns after it are counted at query time (message-search.ts), so
 * no older row is rewritten when its replies arrive.
 */
export const indexBatchSize = 200;

/**
 * The mark moves once this many messages past it are indexed: a search after every append then writes one
 * row per message (its search row) and the mark once every `markStride` messages. A search reads the rows
 * past the mark (at most `markStride` more than the new ones) to find the ones without a search row.
 */
export const markStride = 64;

interface PendingRow {
  /** The mark, on the rows of the first batch. */
  mark?: number | null;
  rowid: number;
  id: string;
  session_id: string;
  role: string;
  content: string;
  content_chunks: number | null;
}

/** How many appended messages the index of the lean and indexed layouts may lag behind (`countUnindexed`). */
const catchUpEvery = 8;

/**
 * Per database (`databaseOf`: every client of one Durable Object's storage or better-sqlite3 handle, so stores
 * built per request count together): messages appended since the index last caught up in this isolate.
 */
const unindexedAppends = new WeakMap<object, number>();

/**
 * Counts `appended` messages the index does not hold yet; true once they reach `catchUpEvery`, when the
 * caller (the append) catches the index up. A catch-up that finishes (an append's or a search's) starts the
 * count again.
 */
export function countUnindexed(client: SqlClient, appended: number): boolean {
  const database = databaseOf(client);
  const pending = (unindexedAppends.get(database) ?? 0) + appended;
  unindexedAppends.set(database, pending);
  return pending >= catchUpEvery;
}

export function catchUpMessageIndex(client: SqlClient): Promise<void> {
  return runSteps(client, catchUpSteps(client));
}

/**
 * The catch-up a search runs first, where the database takes writes. On one that only reads (better-sqlite3's
 * `readonly: true`, `PRAGMA query_only`) the search reads the index as it stands: the messages appended since
 * it last caught up (at most `catchUpEvery` of each writer's, which indexes them as it appends) are found once
 * a search that can write has indexed them. Any other failure is the search's.
 */
export function* catchUpWhereWritable(client: SqlClient): SqlSteps<void> {
  try {
    yield* catchUpSteps(client);
  } catch (error) {
    if (!isReadOnlyRefusal(error)) throw error;
  }
}

/** `catchUpMessageIndex` as steps (sql-steps.ts), for a search that must answer at once. */
export function* catchUpSteps(client: SqlClient): SqlSteps<void> {
  const withContext = yield* contextColumnSteps(client);
  // The first batch reads the mark in the same statement: a search with nothing to index runs one.
  let rows: PendingRow[] = yield* rowsOf<PendingRow>(withContext ? firstBatch.ours : firstBatch.agents);
  let mark = Number(rows[0]?.mark ?? 0);
  let cursor = mark;
  for (;;) {
    const last = rows.at(-1);
    if (last === undefined) return caughtUp(client);
    const slices = yield* continuationSliceSteps(
      rows.filter((row) => Number(row.content_chunks ?? 0) > 0).map((row) => row.id),
    );
    const statements: SqlStatement[] = withContext
      ? // By rowid, one statement each (FTS5 answers a rowid range by reading every row it holds): a row
        // another search wrote meanwhile is replaced, never doubled.
        rows.map((row) => sql`DELETE FROM assistant_fts WHERE rowid = ${row.rowid}`)
      : [
          // A table Cloudflare agents' Sessions API created may hold, in this range, the row of a message it
          // re-indexed under the next free rowid: only this batch's messages' rows are replaced.
          sql`DELETE FROM assistant_fts WHERE rowid > ${cursor} AND rowid <= ${last.rowid}
            AND id IN (SELECT value FROM json_each(${JSON.stringify(rows.map((row) => row.id))}))`,
        ];
    const written: number[] = [];
    for (const row of rows) {
      const continuation = slices.get(row.id) ?? [];
      const message = parseStoredMessage(row.content + continuation.map((slice) => slice.content).join(""));
      const indexed = message === null ? null : indexedMessageOf(message);
      if (indexed === null || indexed.text.length === 0) continue;
      // Written only while the message is stored as it was read: a writer may have changed it (or deleted it
      // and given its rowid to a new message) since, and a row of its old text would stay, found by no catch-up.
      const unchanged = withContext ? storedAsRead(row, continuation) : sql``;
      statements.push(indexRowStatement(Number(row.rowid), indexed, withContext, unchanged));
      written.push(Number(row.rowid));
    }
    cursor = Number(last.rowid);
    // Every message up to `cursor` is indexed now. The mark is one more billed row: it moves when it is
    // `markStride` behind (or always, on a table of agents' shape, whose rows cannot be found by rowid), and
    // on our table only when every row above was written: a message changed since it was read stays above it.
    if (!withContext || cursor - mark >= markStride || rows.length === indexBatchSize) {
      const allWritten =
        !withContext || written.length === 0
          ? sql``
          : sql`AND (SELECT count(*) FROM assistant_fts_content
              WHERE id IN (${join(written.map((rowid) => raw(String(rowid))))})) = ${written.length}`;
      statements.push(sql`UPDATE assistant_fts_state SET indexed_rowid = ${cursor}
        WHERE key = 'messages' AND indexed_rowid = ${mark} ${allWritten}`);
      mark = cursor;
    }
    yield* groupOf(statements);
    if (rows.length < indexBatchSize) return caughtUp(client);
    rows = yield* rowsOf<PendingRow>(pendingStatement(withContext, cursor));
  }
}

/** The mark (`assistant_fts_state.indexed_rowid`; no row: 0), read in SQL. */
const markOfState = raw(
  `coalesce((SELECT indexed_rowid FROM assistant_fts_state WHERE key = 'messages'), 0)`,
);

/**
 * The next batch of messages to index: past `after` (`null`: past the mark, each row carrying it as `mark`), in
 * rowid order. Our table keeps a message's row under the message's rowid, so the messages past the mark that
 * have a row already are indexed (the mark moves every `markStride` messages, not on every search); each is
 * looked for in FTS5's own table by rowid (one seek, where the virtual table's lookup costs several).
 */
function pendingStatement(withContext: boolean, after: number | null): SqlStatement {
  const past = after === null ? markOfState : sql`${after}`;
  const mark = after === null ? sql`${markOfState} AS mark,` : sql``;
  return withContext
    ? sql`
      SELECT ${mark} m.rowid, m.id, m.session_id, m.role, m.content, m.content_chunks FROM assistant_messages m
      WHERE m.rowid > ${past} AND NOT EXISTS (SELECT 1 FROM assistant_fts_content f WHERE f.id = m.rowid)
      ORDER BY m.rowid ASC LIMIT ${limitLiteral(indexBatchSize)}`
    : sql`
      SELECT ${mark} rowid, id, session_id, role, content, content_chunks FROM assistant_messages
      WHERE rowid > ${past} ORDER BY rowid ASC LIMIT ${limitLiteral(indexBatchSize)}`;
}

/** The first batch's statements (they bind nothing), built once: the same statement text every search. */
const firstBatch = { ours: pendingStatement(true, null), agents: pendingStatement(false, null) };

/** The index holds every message appended so far: the count of `countUnindexed` starts again. */
function caughtUp(client: SqlClient): void {
  unindexedAppends.set(databaseOf(client), 0);
}

/**
 * A condition on `m`: the message is stored as `row` and its continuation slices were read (its first slice,
 * its number of slices and each slice). An update rewrites them all; a message deleted and a new one stored
 * under its rowid differs in them too.
 */
function storedAsRead(row: PendingRow, continuation: readonly ContinuationSlice[]): SqlStatement {
  const slices = continuation.map(
    (slice) => sql`AND EXISTS (SELECT 1 FROM assistant_message_chunks c
      WHERE c.id = m.id AND c.idx = ${raw(String(slice.idx))} AND c.content = ${slice.content})`,
  );
  return sql`AND m.content = ${row.content} AND m.content_chunks IS ${row.content_chunks}
    ${join(slices, " ", sql``)}`;
}

/** Continuation slices of the given messages, joined in order, keyed by id. */
export async function readContinuations(
  client: SqlClient,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const slices = await runSteps(client, continuationSliceSteps(ids));
  return new Map([...slices].map(([id, parts]) => [id, parts.map((slice) => slice.content).join("")]));
}

/** One `assistant_message_chunks` row: the `idx`th slice after a message's first. */
interface ContinuationSlice {
  idx: number;
  content: string;
}

/** Continuation slices of the given messages, in order, keyed by id. */
function* continuationSliceSteps(ids: readonly string[]): SqlSteps<Map<string, ContinuationSlice[]>> {
  const slices = new Map<string, ContinuationSlice[]>();
  if (ids.length === 0) return slices;
  const rows = yield* rowsOf<{ id: string; idx: number; content: string }>(sql`
    SELECT id, idx, content FROM assistant_message_chunks
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) ORDER BY id ASC, idx ASC`);
  for (const row of rows) {
    const parts = slices.get(row.id) ?? [];
    parts.push({ idx: Number(row.idx), content: row.content });
    slices.set(row.id, parts);
  }
  return slices;
}
