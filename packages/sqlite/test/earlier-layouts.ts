/**
 * Databases as earlier releases left them: each layout's DDL as SQL text, taken from git history (the commit
 * is named), and a few messages in two sessions written as that release wrote them. Shared by the Node
 * (better-sqlite3) and workerd tests of the upgrade on open.
 */

/** Runs one statement with bound values (better-sqlite3's `prepare().run()`, a Durable Object's `sql.exec`). */
export type Exec = (statement: string, ...values: (string | number | null)[]) => void;

export interface EarlierLayout {
  /** What wrote it, and the commit its DDL is taken from. */
  readonly name: string;
  /** The layout today's code reads it as. */
  readonly layout: "keyed" | "lean" | "indexed";
  readonly ddl: readonly string[];
  /** Writes one message row (and what that release wrote beside it); `place` counts from 1. */
  readonly insert: (exec: Exec, row: FixtureRow) => void;
  /** Writes one overlay, when that release's overlay table was not the shared one (`writeEarlierDatabase`). */
  readonly insertOverlay?: (exec: Exec, id: string, sessionId: string, place: number) => void;
}

/** One stored message of a fixture. */
export interface FixtureRow {
  id: string;
  sessionId: string;
  parentId: string | null;
  role: "user" | "assistant";
  text: string;
  place: number;
  parentPlace: number | null;
  depth: number;
}

const agentsMessages = `CREATE TABLE IF NOT EXISTS assistant_messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL DEFAULT '',
  parent_id TEXT,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP
)`;
const agentsIndexes = [
  "CREATE INDEX IF NOT EXISTS idx_assistant_msg_parent ON assistant_messages(parent_id)",
  "CREATE INDEX IF NOT EXISTS idx_assistant_msg_session ON assistant_messages(session_id)",
];
const compactions = `CREATE TABLE IF NOT EXISTS assistant_compactions (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL,
  from_message_id TEXT NOT NULL,
  to_message_id TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP
)`;
const compactionsIndex =
  "CREATE INDEX IF NOT EXISTS idx_assistant_compactions_session ON assistant_compactions(session_id)";
const leaves =
  "CREATE TABLE IF NOT EXISTS assistant_leaves (session_id TEXT PRIMARY KEY, leaf_id TEXT NOT NULL)";
const chunks = `CREATE TABLE IF NOT EXISTS assistant_message_chunks (
  id TEXT NOT NULL, idx INTEGER NOT NULL, content TEXT NOT NULL, PRIMARY KEY (id, idx)) WITHOUT ROWID`;
const tombstones = `CREATE TABLE IF NOT EXISTS assistant_message_tombstones (
  session_id TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (id, session_id)) WITHOUT ROWID`;
const indexMark =
  "CREATE TABLE IF NOT EXISTS assistant_fts_state (key TEXT PRIMARY KEY, indexed_rowid INTEGER NOT NULL)";

const content = (row: FixtureRow) =>
  JSON.stringify({ id: row.id, role: row.role, parts: [{ type: "text", text: row.text }] });

/** agents@0.22.0 (and contextblocks' first releases): the message row and its search row, both kept on append. */
function agentsInsert(exec: Exec, row: FixtureRow, extra: { depth: boolean; leaves: boolean }): void {
  exec(
    extra.depth
      ? "INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth) VALUES (?, ?, ?, ?, ?, ?)"
      : "INSERT INTO assistant_messages (id, session_id, parent_id, role, content) VALUES (?, ?, ?, ?, ?)",
    ...[row.id, row.sessionId, row.parentId, row.role, content(row)],
    ...(extra.depth ? [row.depth] : []),
  );
  exec(
    "INSERT INTO assistant_fts (rowid, id, session_id, role, content) VALUES (?, ?, ?, ?, ?)",
    row.place,
    row.id,
    row.sessionId,
    row.role,
    row.text,
  );
  if (extra.leaves) {
    exec(
      "INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET leaf_id = excluded.leaf_id",
      row.sessionId,
      row.id,
    );
  }
}

/** Schema 3 (c8d8a12, says_when): the search table's shape before `session_key`. */
const searchTableBeforeSessionKey = `CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts USING fts5(id UNINDEXED,
  session_id UNINDEXED, role UNINDEXED, speaker UNINDEXED, parent_row UNINDEXED, grandparent_row UNINDEXED,
  content, context, time, says_when UNINDEXED, tokenize='porter unicode61')`;
const calibration =
  "CREATE TABLE IF NOT EXISTS assistant_token_calibration (session_id TEXT PRIMARY KEY, calibration REAL NOT NULL) WITHOUT ROWID";
const markerTable =
  "CREATE TABLE IF NOT EXISTS contextblocks_schema (part TEXT PRIMARY KEY, version INTEGER NOT NULL, layout TEXT) WITHOUT ROWID";

/** A search row of schema 3 (`says_when` 0: no fixture text says when), under the message's place. */
function searchRowBeforeSessionKey(exec: Exec, row: FixtureRow): void {
  exec(
    "INSERT INTO assistant_fts (rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time, says_when) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, '', '8 may 2023', 0)",
    ...[row.place, row.id, row.sessionId, row.role, row.role, row.parentPlace, row.text],
  );
}

/**
 * The fixtures of the release before the search table's `session_key` (schema 3): the previous shape, which
 * the upgrade copies row by row, rowids kept. The keyed one ends with a blank row (what a delete writes:
 * no id, no session), which keeps its place and gets no session token.
 */
export const layoutsBeforeSessionKey: readonly EarlierLayout[] = [
  {
    name: "keyed, schema 3 (c8d8a12: says_when, no session_key)",
    layout: "keyed",
    ddl: [
      `CREATE TABLE IF NOT EXISTS assistant_messages (
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
) WITHOUT ROWID`,
      `CREATE TABLE IF NOT EXISTS assistant_compactions (
  session_id TEXT NOT NULL DEFAULT '',
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  summary TEXT NOT NULL,
  from_message_id TEXT NOT NULL,
  to_message_id TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID`,
      searchTableBeforeSessionKey,
      leaves,
      chunks,
      tombstones,
      calibration,
      markerTable,
      "INSERT INTO contextblocks_schema (part, version, layout) VALUES ('sessions', 3, 'keyed')",
    ],
    insert: (exec, row) => {
      exec(
        "INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ...[row.id, row.sessionId, row.parentId, row.role, content(row), row.depth, row.place],
      );
      searchRowBeforeSessionKey(exec, row);
      if (row.place === fixtureRows.length) {
        exec("INSERT INTO assistant_fts (rowid, content) VALUES (?, '')", row.place + 1);
      }
    },
    insertOverlay: (exec, id, sessionId, place) =>
      exec(
        "INSERT INTO assistant_compactions (session_id, seq, id, summary, from_message_id, to_message_id) VALUES (?, ?, ?, ?, ?, ?)",
        ...[sessionId, place, id, `summary ${id}`, "s1", "s2"],
      ),
  },
  {
    name: "lean, schema 3 (c8d8a12: says_when, no session_key), every message indexed",
    layout: "lean",
    ddl: [
      `CREATE TABLE IF NOT EXISTS assistant_messages (
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
)`,
      compactions,
      compactionsIndex,
      searchTableBeforeSessionKey,
      leaves,
      chunks,
      tombstones,
      calibration,
      indexMark,
      "INSERT INTO assistant_fts_state (key, indexed_rowid) VALUES ('messages', 4)",
      markerTable,
      "INSERT INTO contextblocks_schema (part, version, layout) VALUES ('sessions', 3, 'lean')",
    ],
    insert: (exec, row) => {
      exec(
        "INSERT INTO assistant_messages (rowid, id, session_id, parent_id, role, content, depth, parent_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ...[
          row.place,
          row.id,
          row.sessionId,
          row.parentId,
          row.role,
          content(row),
          row.depth,
          row.parentPlace,
        ],
      );
      searchRowBeforeSessionKey(exec, row);
    },
  },
];

export const earlierLayouts: readonly EarlierLayout[] = [
  {
    name: "agents@0.22.0 (agents/experimental/memory/session)",
    layout: "indexed",
    ddl: [
      agentsMessages,
      ...agentsIndexes,
      compactions,
      "CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts USING fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, content, tokenize='porter unicode61')",
      "CREATE TABLE IF NOT EXISTS assistant_config (session_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (session_id, key))",
    ],
    insert: (exec, row) => agentsInsert(exec, row, { depth: false, leaves: false }),
  },
  {
    name: "contextblocks' first sessions release (91a6693: depth, assistant_leaves)",
    layout: "indexed",
    ddl: [
      agentsMessages,
      ...agentsIndexes,
      compactions,
      compactionsIndex,
      "CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts USING fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, content, tokenize='porter unicode61')",
      leaves,
      "ALTER TABLE assistant_messages ADD COLUMN depth INTEGER",
    ],
    insert: (exec, row) => agentsInsert(exec, row, { depth: true, leaves: true }),
  },
  {
    name: "indexed, search fields without parent rows (d0dfbf4: chunks, lazy index mark)",
    layout: "indexed",
    ddl: [
      agentsMessages,
      ...agentsIndexes,
      compactions,
      compactionsIndex,
      "CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts USING fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, speaker UNINDEXED, content, context, time, tokenize='porter unicode61')",
      leaves,
      chunks,
      indexMark,
      "ALTER TABLE assistant_messages ADD COLUMN depth INTEGER",
      "ALTER TABLE assistant_messages ADD COLUMN content_chunks INTEGER",
    ],
    // The search index was built lazily: these rows are not indexed yet (the mark is 0).
    insert: (exec, row) => {
      exec(
        "INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth) VALUES (?, ?, ?, ?, ?, ?)",
        ...[row.id, row.sessionId, row.parentId, row.role, content(row), row.depth],
      );
      exec("INSERT OR IGNORE INTO assistant_fts_state (key, indexed_rowid) VALUES ('messages', 0)");
      exec(
        "INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET leaf_id = excluded.leaf_id",
        row.sessionId,
        row.id,
      );
    },
  },
  {
    name: "the first lean layout (a701af8: parent_seq, tombstones, no tokens)",
    layout: "lean",
    ddl: [
      `CREATE TABLE IF NOT EXISTS assistant_messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL DEFAULT '',
  parent_id TEXT,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  depth INTEGER,
  content_chunks INTEGER,
  parent_seq INTEGER
)`,
      compactions,
      compactionsIndex,
      "CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts USING fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, content, context, tokenize='porter unicode61')",
      leaves,
      chunks,
      tombstones,
      indexMark,
      "INSERT OR IGNORE INTO assistant_fts_state (key, indexed_rowid) SELECT 'messages', COALESCE(MAX(rowid), 0) FROM assistant_messages",
    ],
    insert: (exec, row) =>
      exec(
        "INSERT INTO assistant_messages (rowid, id, session_id, parent_id, role, content, depth, parent_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ...[
          row.place,
          row.id,
          row.sessionId,
          row.parentId,
          row.role,
          content(row),
          row.depth,
          row.parentPlace,
        ],
      ),
  },
  {
    name: "the first keyed layout (7206fd2: WITHOUT ROWID, a search row per message under its seq)",
    layout: "keyed",
    ddl: [
      `CREATE TABLE IF NOT EXISTS assistant_messages (
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
) WITHOUT ROWID`,
      compactions,
      compactionsIndex,
      "CREATE VIRTUAL TABLE IF NOT EXISTS assistant_fts USING fts5(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, speaker UNINDEXED, parent_row UNINDEXED, grandparent_row UNINDEXED, content, context, time, tokenize='porter unicode61')",
      leaves,
      chunks,
      tombstones,
      "CREATE TABLE IF NOT EXISTS assistant_token_calibration (session_id TEXT PRIMARY KEY, calibration REAL NOT NULL) WITHOUT ROWID",
    ],
    insert: (exec, row) => {
      exec(
        "INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ...[row.id, row.sessionId, row.parentId, row.role, content(row), row.depth, row.place],
      );
      exec(
        "INSERT INTO assistant_fts (rowid, id, session_id, role, speaker, parent_row, grandparent_row, content, context, time) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, '', '')",
        ...[row.place, row.id, row.sessionId, row.role, row.role, row.parentPlace, row.text],
      );
    },
  },
  ...layoutsBeforeSessionKey,
];

/** The messages every fixture holds: a path of three in "chat", one in "other". */
export const fixtureRows: readonly FixtureRow[] = [
  {
    id: "u1",
    sessionId: "chat",
    parentId: null,
    role: "user",
    text: "the lighthouse keeper's cat",
    place: 1,
    parentPlace: null,
    depth: 0,
  },
  {
    id: "o1",
    sessionId: "other",
    parentId: null,
    role: "user",
    text: "an unrelated harbour question",
    place: 2,
    parentPlace: null,
    depth: 0,
  },
  {
    id: "a1",
    sessionId: "chat",
    parentId: "u1",
    role: "assistant",
    text: "the cat is called Marlowe",
    place: 3,
    parentPlace: 1,
    depth: 1,
  },
  {
    id: "u2",
    sessionId: "chat",
    parentId: "a1",
    role: "user",
    text: "what colour is Marlowe",
    place: 4,
    parentPlace: 3,
    depth: 2,
  },
];

/** Creates `fixture`'s tables and rows through `exec`. */
export function writeEarlierDatabase(exec: Exec, fixture: EarlierLayout): void {
  for (const statement of fixture.ddl) exec(statement);
  for (const row of fixtureRows) fixture.insert(exec, row);
  // Every earlier release (and agents@0.22.0) inserted overlays alike, into its own overlay table.
  for (const [index, id] of fixtureOverlayIds.entries()) {
    if (fixture.insertOverlay !== undefined) {
      fixture.insertOverlay(exec, id, fixtureOverlaySession, index + 1);
      continue;
    }
    exec(
      "INSERT INTO assistant_compactions (id, session_id, summary, from_message_id, to_message_id) VALUES (?, ?, ?, ?, ?)",
      ...[id, fixtureOverlaySession, `summary ${id}`, "s1", "s2"],
    );
  }
}

/** The overlays every fixture holds, oldest first, in a session of their own (its messages are not stored). */
export const fixtureOverlayIds = ["c-first", "c-second"] as const;
export const fixtureOverlaySession = "shelf";

/**
 * The shape of the session tables, to compare a migrated database with a new one of its layout: every
 * table's and index's name, and each table's columns. The search table is left out (one agents created
 * keeps its shape: `searchColumnsQuery`), and so is agents' own `assistant_config`.
 */
export const schemaShapeQuery = `SELECT m.type || ' ' || m.name || COALESCE(' ' || c.name, '') AS entry
  FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) c ON m.type = 'table'
  WHERE (m.name LIKE 'assistant_%' OR m.name LIKE 'idx_assistant_%' OR m.name = 'contextblocks_schema')
    AND (m.name NOT LIKE 'assistant_fts%' OR m.name = 'assistant_fts_state') AND m.name <> 'assistant_config'
  ORDER BY entry`;

/** The search table's columns. */
export const searchColumnsQuery = "SELECT name FROM pragma_table_info('assistant_fts') ORDER BY cid";

/** True for the fixtures whose search table agents created (kept as it is, searched by text alone). */
export const agentsSearchTable = (fixture: EarlierLayout): boolean =>
  fixture.ddl.some((statement) =>
    /fts5\(id UNINDEXED, session_id UNINDEXED, role UNINDEXED, content, tokenize/.test(statement),
  );
