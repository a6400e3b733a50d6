import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { createSearchTable, upgradeSearchTable } from "./message-index-schema.js";

/**
 * The tables, named and shaped as `agents/experimental/memory/session` creates them, so a database written
 * by it is read as is. Additions are ours and optional for its rows:
 *
 * - `assistant_messages.depth`: the message's distance from the root (0 for a root), set on append, so the
 *   path length is one indexed read; `NULL` on rows another writer made (then counted along the path once).
 * - `assistant_leaves`: one row per session pointing at its latest leaf, so an append does not search the
 *   session for it.
 * - An index on `assistant_compactions(session_id)`: overlays are read on every history read.
 *
 * - `assistant_fts.context`, `.time`, `.speaker`: the text of the turns around the message, its day and its
 *   speaker, searched beside its text and never returned (message-search.ts, message-index-schema.ts); a
 *   table `agents` created lacks them and is searched by text alone.
 * - `assistant_messages.content_chunks`: how many `assistant_message_chunks` rows continue a message too
 *   large for one Durable Object row (`NULL`/0: none; see `message-rows.ts`).
 * - `assistant_fts_state`: the search index's high-water mark; the index is built lazily, at search time
 *   (see `message-index.ts`), so an append writes no search row.
 *
 * - `assistant_messages.parent_seq`: the parent's `rowid`, so a path is walked one row per message (a
 *   rowid seek) instead of an index probe and a row.
 * - `assistant_messages.tokens`: the message's token stamp (`messageTokenStamp`), written with the row;
 *   `path_tokens`: the stamps of its path root..it summed, so the path's estimate is one row
 *   (`getPathTokens`). `NULL` on rows another writer made, and `path_tokens` set back to `NULL` where an
 *   update or a delete above a row changed it (then summed along the path when read).
 * - `assistant_token_calibration`: each session's provider-reported tokens over the estimate
 *   (`Session.reportUsage`), so a new `Session` per request starts calibrated.
 * - `assistant_message_tombstones`: ids deleted while stored messages still named them as their parent
 *   (only on the lean layout, which has no parent index to ask): such an id is refused on append.
 *
 * The FTS row of a message we index has the message's `rowid`, so it is replaced and deleted by rowid
 * instead of a scan (FTS5 cannot index `UNINDEXED` columns).
 *
 * Two layouts of `assistant_messages` (see `SessionLayout`): a database that has no `assistant_messages`
 * table when a store first opens it gets the lean one, without the parent and session indexes, so an
 * append writes 2 rows on a Durable Object (the row and its primary-key entry) instead of 5. A database
 * agents@0.22.0 or an older contextblocks wrote keeps its indexes and is read and written as before; nothing
 * is migrated on open (only columns are added, no row is rewritten).
 */
export const messagesTable = "assistant_messages";
export const compactionsTable = "assistant_compactions";
export const searchTable = "assistant_fts";
export const leavesTable = "assistant_leaves";
export const chunksTable = "assistant_message_chunks";
export const searchStateTable = "assistant_fts_state";

export const tombstonesTable = "assistant_message_tombstones";
export const calibrationTable = "assistant_token_calibration";

/**
 * - `"lean"`: `assistant_messages` has only its primary key. The latest leaf is the session's newest row
 *   (children are inserted after their parents, so it has none), kept per client and checked by the append
 *   itself; a path is walked by `parent_seq`. Reading a session's whole tree, a message's branches, or
 *   deleting scans the table.
 * - `"indexed"`: the parent and session indexes of agents@0.22.0's tables and the `assistant_leaves` pointer.
 */
export type SessionLayout = "keyed" | "lean" | "indexed";

/**
 * The keyed table (the default for a new database): one b-tree keyed by `id` (`WITHOUT ROWID`, no secondary
 * index), so a message's row is one billed row written on a Durable Object. It has no `rowid`: the order of
 * messages is `seq`, which is also the rowid of the message's search row (`assistant_fts`), written in the
 * same transaction for every message (keyed-tail.ts). `seq` is `NOT NULL`: a writer that does not know this
 * layout (agents@0.22.0, whose `getLatestLeaf` also reads `rowid`) fails on it instead of storing a message
 * outside the order.
 */
const createKeyedTable = sql`CREATE TABLE IF NOT EXISTS assistant_messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL DEFAULT '',
    parent_id TEXT,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    depth INTEGER,
    content_chunks INTEGER,
    seq INTEGER NOT NULL,
    tokens INTEGER,
    path_tokens INTEGER
  ) WITHOUT ROWID`;

/** The lean table: the columns of agents@0.22.0's table and ours, with no secondary index. */
const createLeanTable = sql`CREATE TABLE IF NOT EXISTS assistant_messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL DEFAULT '',
    parent_id TEXT,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    depth INTEGER,
    content_chunks INTEGER,
    parent_seq INTEGER,
    tokens INTEGER,
    path_tokens INTEGER
  )`;

const indexedStatements: SqlStatement[] = [
  sql`CREATE TABLE IF NOT EXISTS assistant_messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL DEFAULT '',
    parent_id TEXT,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP
  )`,
  sql`CREATE INDEX IF NOT EXISTS idx_assistant_msg_parent ON assistant_messages(parent_id)`,
  sql`CREATE INDEX IF NOT EXISTS idx_assistant_msg_session ON assistant_messages(session_id)`,
];

const createStatements: SqlStatement[] = [
  sql`CREATE TABLE IF NOT EXISTS assistant_compactions (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL,
    from_message_id TEXT NOT NULL,
    to_message_id TEXT NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP
  )`,
  sql`CREATE INDEX IF NOT EXISTS idx_assistant_compactions_session ON assistant_compactions(session_id)`,
  createSearchTable,
  sql`CREATE TABLE IF NOT EXISTS assistant_leaves (
    session_id TEXT PRIMARY KEY,
    leaf_id TEXT NOT NULL
  )`,
  sql`CREATE TABLE IF NOT EXISTS assistant_message_chunks (
    id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (id, idx)
  ) WITHOUT ROWID`,
  sql`CREATE TABLE IF NOT EXISTS assistant_message_tombstones (
    session_id TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (id, session_id)
  ) WITHOUT ROWID`,
  sql`CREATE TABLE IF NOT EXISTS assistant_token_calibration (
    session_id TEXT PRIMARY KEY,
    calibration REAL NOT NULL
  ) WITHOUT ROWID`,
];

/** The lazy search indexer's mark (lean and indexed layouts; the keyed one writes each search row on append). */
const indexMarkStatements: SqlStatement[] = [
  sql`CREATE TABLE IF NOT EXISTS assistant_fts_state (
    key TEXT PRIMARY KEY,
    indexed_rowid INTEGER NOT NULL
  )`,
  // Created on a database whose index was kept on every append (ours before, or agents'): all indexed.
  sql`INSERT OR IGNORE INTO assistant_fts_state (key, indexed_rowid)
    SELECT 'messages', COALESCE(MAX(rowid), 0) FROM assistant_messages`,
];

/** The layout a store gives a database that has no `assistant_messages` table yet. */
export type NewSessionLayout = "keyed" | "lean";

/**
 * The layout a new database gets unless one is asked for. Keyed where rows are billed (a Durable Object;
 * a client that does not say): an append writes 2 billed rows, search row included. Lean where rows cost
 * only time (better-sqlite3: `billsRows: false`): an append writes no search row, so it is several times
 * faster, and the search index is built lazily at search time.
 */
export function defaultNewLayout(client: SqlClient): NewSessionLayout {
  return client.billsRows === false ? "lean" : "keyed";
}

/**
 * Creates what is missing; safe to run on a database `agents` wrote (and on every first use). A database
 * without `assistant_messages` gets `newLayout` (`defaultNewLayout` unless asked); one that has it keeps
 * its layout.
 */
export async function ensureSchema(
  client: SqlClient,
  newLayout: NewSessionLayout = defaultNewLayout(client),
): Promise<SessionLayout> {
  // A table with `seq` is keyed; one without the parent index is lean (agents@0.22.0 and older
  // contextblocks create both together).
  const existing = await client.query<{ name: string }>`
    SELECT name FROM sqlite_master WHERE (type = 'table' AND name = 'assistant_messages')
      OR (type = 'index' AND name = 'idx_assistant_msg_parent')
    UNION ALL SELECT 'seq' FROM pragma_table_info('assistant_messages') WHERE name = 'seq'`;
  const keyed =
    existing.some((row) => row.name === "seq") ||
    (newLayout === "keyed" && !existing.some((row) => row.name === "assistant_messages"));
  if (keyed) {
    await client.batch([createKeyedTable, ...createStatements]);
    await secureDelete(client);
    return "keyed";
  }
  const indexed = existing.some((row) => row.name === "idx_assistant_msg_parent");
  await client.batch(
    [indexed ? indexedStatements : [createLeanTable], createStatements, indexMarkStatements].flat(),
  );
  await upgradeSearchTable(client);
  const columns = new Set(
    (await client.query<{ name: string }>`SELECT name FROM pragma_table_info('assistant_messages')`).map(
      (row) => row.name,
    ),
  );
  if (!columns.has("depth"))
    await addColumn(client, sql`ALTER TABLE assistant_messages ADD COLUMN depth INTEGER`);
  if (!columns.has("content_chunks")) {
    await addColumn(client, sql`ALTER TABLE assistant_messages ADD COLUMN content_chunks INTEGER`);
  }
  if (!columns.has("parent_seq"))
    await addColumn(client, sql`ALTER TABLE assistant_messages ADD COLUMN parent_seq INTEGER`);
  if (!columns.has("tokens"))
    await addColumn(client, sql`ALTER TABLE assistant_messages ADD COLUMN tokens INTEGER`);
  if (!columns.has("path_tokens"))
    await addColumn(client, sql`ALTER TABLE assistant_messages ADD COLUMN path_tokens INTEGER`);
  await secureDelete(client);
  // agents@0.22.0 opening a lean database adds the indexes: it is read as indexed from then on, since that
  // writer neither fills `parent_seq` nor knows the lean rules.
  return indexed ? "indexed" : "lean";
}

/**
 * FTS5's `secure-delete` (SQLite 3.44+): a deleted message's words leave the index's own segments too,
 * not only its content table, so a deleted session's text is found in no table. Set once per database.
 */
async function secureDelete(client: SqlClient): Promise<void> {
  const set = await client.query<{ v: unknown }>`
    SELECT v FROM assistant_fts_config WHERE k = 'secure-delete'`;
  if (Number(set[0]?.v ?? 0) === 1) return;
  try {
    await client.query`INSERT INTO assistant_fts (assistant_fts, rank) VALUES ('secure-delete', 1)`;
  } catch {
    // An SQLite older than 3.44 has no secure-delete: deleted words stay in the index until it merges.
  }
}

async function addColumn(client: SqlClient, statement: SqlStatement): Promise<void> {
  try {
    await client.batch([statement]);
  } catch (error) {
    // Another writer added it meanwhile: the only failure expected once the table exists.
    if (!/duplicate column/i.test(String((error as { message?: unknown })?.message ?? error))) throw error;
  }
}

/** One schema check per client and process: every provider on the same database shares it. */
const ready = new WeakMap<SqlClient, Promise<SessionLayout>>();

export function schemaReady(client: SqlClient, newLayout?: NewSessionLayout): Promise<SessionLayout> {
  let promise = ready.get(client);
  if (promise === undefined) {
    promise = ensureSchema(client, newLayout);
    promise.catch(() => ready.delete(client));
    ready.set(client, promise);
  }
  return promise;
}

/**
 * True while `assistant_messages` has no parent index, so the lean layout's rules still hold. agents@0.22.0
 * (`agents/experimental/memory/session`) creates that index whenever it opens the database, and its writes
 * keep none of the lean rules (no `parent_seq`, no tombstone for a deleted id that stored messages still
 * name). A lean append puts this in its conditional insert: `pragma_index_info` of an index that does not
 * exist returns no row, so on the lean layout it reads nothing (0 billed rows on a Durable Object).
 */
export const leanLayoutStill: SqlStatement = sql`NOT EXISTS (SELECT 1 FROM pragma_index_info('idx_assistant_msg_parent'))`;

/**
 * Forgets the layout read for this client, so its next use reads it again: after `leanLayoutStill` failed,
 * a database that agents@0.22.0 wrote to is read as indexed from then on, as after a restart.
 */
export function forgetLayout(client: SqlClient): void {
  ready.delete(client);
}
