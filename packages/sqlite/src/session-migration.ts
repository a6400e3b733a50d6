import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { createSearchTable, searchTableRebuildSteps } from "./message-index-schema.js";
import {
  defaultNewLayout,
  type NewSessionLayout,
  SESSION_SCHEMA_VERSION,
  type SessionLayout,
} from "./session-schema.js";
import { groupOf, rowsOf, runSteps, type SqlSteps } from "./sql-steps.js";

/**
 * Creates the session tables, or brings a database an earlier release (or agents@0.22.0) wrote to this
 * release's: loaded by `ensureSchema` only when the schema marker is missing or older. Every layout ever
 * written keeps its layout; what changed since is added (tables, indexes, columns), a search table of an
 * earlier shape is rebuilt, and the marker is written last, all in one atomic group.
 *
 * No data of an earlier layout is left behind: every one keyed `assistant_messages` by `id` alone, so the
 * rule that an id is stored once per database already held (on Postgres it did not: see its migration).
 */

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

/**
 * The overlay table of the lean and indexed layouts: agents@0.22.0's own, which that release inserts into
 * (`id`, `session_id`, `summary`, `from_message_id`, `to_message_id`) and reads in `rowid` order, so it
 * keeps that shape: an overlay writes its row, its `id` key entry and its session index entry.
 */
const sharedCompactionStatements: SqlStatement[] = [
  sql`CREATE TABLE IF NOT EXISTS assistant_compactions (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL,
    from_message_id TEXT NOT NULL,
    to_message_id TEXT NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP
  )`,
  sql`CREATE INDEX IF NOT EXISTS idx_assistant_compactions_session ON assistant_compactions(session_id)`,
];

/**
 * The overlay table of the keyed layout (which agents@0.22.0 cannot write to anyway: its message table
 * has a `NOT NULL seq`): one b-tree keyed by (session, `seq`), `WITHOUT ROWID`, so an overlay is one
 * billed row on a Durable Object, a session's overlays one range and its newest one seek. `seq` counts the
 * session's overlays in the order they were added.
 */
function keyedCompactionTable(name: string): SqlStatement {
  return raw(`CREATE TABLE IF NOT EXISTS ${name} (
    session_id TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    summary TEXT NOT NULL,
    from_message_id TEXT NOT NULL,
    to_message_id TEXT NOT NULL,
    created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (session_id, seq)
  ) WITHOUT ROWID`);
}

/**
 * A keyed database an earlier release wrote has the shared overlay table: its rows move to the keyed one,
 * their `rowid` as `seq` (the order they were read in), and the old table and its index are dropped.
 */
const keyedCompactionRebuild: SqlStatement[] = [
  keyedCompactionTable("assistant_compactions_keyed"),
  sql`INSERT INTO assistant_compactions_keyed
    (session_id, seq, id, summary, from_message_id, to_message_id, created_at)
    SELECT session_id, rowid, id, summary, from_message_id, to_message_id, created_at FROM assistant_compactions`,
  sql`DROP TABLE assistant_compactions`,
  sql`ALTER TABLE assistant_compactions_keyed RENAME TO assistant_compactions`,
];

const createStatements: SqlStatement[] = [
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

/** The columns added to `assistant_messages` since agents@0.22.0's table, in the order they came. */
const addedColumns = ["depth", "content_chunks", "parent_seq", "tokens", "path_tokens"] as const;

/** The marker table and this release's row in it (the last statement of a migration). */
function markerStatements(layout: SessionLayout): SqlStatement[] {
  return [
    sql`CREATE TABLE IF NOT EXISTS contextblocks_schema (
    part TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    layout TEXT
  ) WITHOUT ROWID`,
    sql`INSERT INTO contextblocks_schema (part, version, layout) VALUES ('sessions', ${SESSION_SCHEMA_VERSION}, ${layout})
    ON CONFLICT (part) DO UPDATE SET version = excluded.version, layout = excluded.layout`,
  ];
}

/** What the database holds now, and the statements that bring it to this release's schema. */
function* plan(newLayout: NewSessionLayout): SqlSteps<{ layout: SessionLayout; statements: SqlStatement[] }> {
  // A table with `seq` is keyed; one without the parent index is lean (agents@0.22.0 and older
  // contextblocks create both together).
  const existing = yield* rowsOf<{ name: string }>(sql`
    SELECT name FROM sqlite_master WHERE (type = 'table' AND name = 'assistant_messages')
      OR (type = 'index' AND name = 'idx_assistant_msg_parent')
    UNION ALL SELECT 'column:' || name FROM pragma_table_info('assistant_messages')
    UNION ALL SELECT 'overlay:' || name FROM pragma_table_info('assistant_compactions')`);
  const names = new Set(existing.map((row) => row.name));
  const keyed = names.has("column:seq") || (newLayout === "keyed" && !names.has("assistant_messages"));
  if (keyed) {
    const overlays =
      names.has("overlay:id") && !names.has("overlay:seq")
        ? keyedCompactionRebuild
        : [keyedCompactionTable("assistant_compactions")];
    const search = yield* searchTableRebuildSteps("keyed");
    return {
      layout: "keyed",
      statements: [
        createKeyedTable,
        ...overlays,
        ...search.before,
        ...createStatements,
        ...search.after,
        ...markerStatements("keyed"),
      ],
    };
  }
  // agents@0.22.0 opening a lean database adds the indexes: it is read as indexed from then on, since that
  // writer neither fills `parent_seq` nor knows the lean rules.
  const layout = names.has("idx_assistant_msg_parent") ? "indexed" : "lean";
  const table = layout === "indexed" ? indexedStatements : [createLeanTable];
  const columns = names.has("assistant_messages")
    ? addedColumns
        .filter((column) => !names.has(`column:${column}`))
        .map((column) => raw(`ALTER TABLE assistant_messages ADD COLUMN ${column} INTEGER`))
    : [];
  const rebuild = yield* searchTableRebuildSteps(layout);
  return {
    layout,
    statements: [
      ...table,
      ...columns,
      ...rebuild.before,
      ...sharedCompactionStatements,
      ...createStatements,
      ...indexMarkStatements,
      ...rebuild.after,
      ...markerStatements(layout),
    ],
  };
}

/**
 * How many times a migration plans again when its group failed because another writer changed the schema
 * between the plan and the group (a column it adds is there now): the next plan sees the other's work.
 */
const attempts = 5;

export function migrateSessionSchema(
  client: SqlClient,
  newLayout: NewSessionLayout = defaultNewLayout(client),
): Promise<SessionLayout> {
  return runSteps(client, migrationSteps(newLayout));
}

/** `migrateSessionSchema` as steps (sql-steps.ts), for a check that must answer at once. */
export function* migrationSteps(newLayout: NewSessionLayout): SqlSteps<SessionLayout> {
  for (let attempt = 1; ; attempt++) {
    const { layout, statements } = yield* plan(newLayout);
    try {
      yield* groupOf(statements);
    } catch (error) {
      if (attempt >= attempts || !raced(error)) throw error;
      continue;
    }
    yield* secureDelete();
    return layout;
  }
}

/** An error another writer's concurrent migration explains: a column added meanwhile, a locked file. */
function raced(error: unknown): boolean {
  const text = String((error as { message?: unknown })?.message ?? error);
  // A keyed overlay table rebuilt meanwhile: the planned copy no longer finds the old table's rowid.
  return /duplicate column|already exists|no such column: rowid|database is locked|SQLITE_BUSY/i.test(text);
}

/**
 * FTS5's `secure-delete` (SQLite 3.44+): a deleted message's words leave the index's own segments too,
 * not only its content table, so a deleted session's text is found in no table. Set once per database.
 */
function* secureDelete(): SqlSteps<void> {
  const set = yield* rowsOf<{ v: unknown }>(sql`
    SELECT v FROM assistant_fts_config WHERE k = 'secure-delete'`);
  if (Number(set[0]?.v ?? 0) === 1) return;
  try {
    yield* rowsOf(sql`INSERT INTO assistant_fts (assistant_fts, rank) VALUES ('secure-delete', 1)`);
  } catch {
    // An SQLite older than 3.44 has no secure-delete: deleted words stay in the index until it merges.
  }
}
