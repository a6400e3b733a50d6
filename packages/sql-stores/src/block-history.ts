import { type BlockVersion, type BlockWrite, ContextError } from "@contextblocks/core";
import { describeValue, type WriteSource } from "@contextblocks/core/store-kit";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { isMissingTableError, raw, type SqlDialect } from "@contextblocks/sql/store-kit";
import { BATCHES_TABLE_NAME, RECENT_COLUMN, recentEntries } from "./recent-versions.js";
import { BLOCKS_TABLE, ensureTable, isMissingTable, type StoreTable } from "./tables.js";

/** Versions a block keeps when no retention is given (versions are kept unless `versions: false`). */
export const DEFAULT_HISTORY_RETENTION = 50;

/** The column of `cf_agents_context_blocks` that holds the block's newest version number (0: none yet). */
export const VERSION_COLUMN = "history_version";

/**
 * Block history (its DDL comes after `BLOCKS_TABLE`'s, whose table it alters). All additive to `agents/context`'s table:
 * - `cf_agents_context_blocks.history_version`: the newest version number, on the block's own row. A write
 *   raises it in the same statement that writes the content, so the next number is read with the block
 *   (one row) and never searched for in the history.
 * - `cf_agents_context_blocks.history_recent` and `contextblocks_block_history_batches`: the newest versions
 *   in the block's own row, moved out 16 at a time to a ring of batches (recent-versions.ts). A write with
 *   history is then one row written, one more every 16 versions.
 * - `contextblocks_block_history`: a ring of `retention` slots per block row label, version `v` in slot
 *   `v % retention`, for writes that do not keep their version in the row (content over 8 KiB, clients
 *   without atomic groups) and for versions an earlier release kept: two rows written per write.
 *
 * The columns are added to a table created without them (an older contextblocks, or `agents@0.22.0`), the
 * number set from the history already kept; on Postgres by `ADD COLUMN IF NOT EXISTS` (also in
 * `schema.sql`), on SQLite by `ensureHistorySchema`. A write of `agents/context` itself leaves the number and
 * the recent versions as they were, so its writes are simply not versions. On Postgres the columns are
 * looked up first (`DO` blocks), so the DDL of a database that has them takes no `ACCESS EXCLUSIVE` lock.
 */
export const HISTORY_TABLE: StoreTable = {
  name: "contextblocks_block_history",
  missingCodes: ["42P01", "42703"],
  ddl: {
    sqlite: `CREATE TABLE IF NOT EXISTS contextblocks_block_history (
  label TEXT NOT NULL,
  slot INTEGER NOT NULL,
  version INTEGER NOT NULL,
  content TEXT NOT NULL,
  source TEXT NOT NULL,
  written_at TEXT NOT NULL,
  PRIMARY KEY (label, slot)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS contextblocks_block_history_batches (
  label TEXT NOT NULL,
  slot INTEGER NOT NULL,
  last_version INTEGER NOT NULL,
  versions TEXT NOT NULL,
  PRIMARY KEY (label, slot)
) WITHOUT ROWID`,
    postgres: `CREATE TABLE IF NOT EXISTS contextblocks_block_history (
  label TEXT NOT NULL,
  slot INTEGER NOT NULL,
  version BIGINT NOT NULL,
  content TEXT NOT NULL,
  source TEXT NOT NULL,
  written_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  PRIMARY KEY (label, slot)
);

DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'cf_agents_context_blocks'::regclass AND attname = 'history_version' AND NOT attisdropped) THEN ALTER TABLE cf_agents_context_blocks ADD COLUMN IF NOT EXISTS history_version BIGINT NOT NULL DEFAULT 0; UPDATE cf_agents_context_blocks AS block SET history_version = kept.version FROM (SELECT label, MAX(version) AS version FROM contextblocks_block_history GROUP BY label) AS kept WHERE block.label = kept.label; END IF; END $$;

CREATE TABLE IF NOT EXISTS contextblocks_block_history_batches (
  label TEXT NOT NULL,
  slot INTEGER NOT NULL,
  last_version BIGINT NOT NULL,
  versions JSONB NOT NULL,
  PRIMARY KEY (label, slot)
);

DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'cf_agents_context_blocks'::regclass AND attname = 'history_recent' AND NOT attisdropped) THEN ALTER TABLE cf_agents_context_blocks ADD COLUMN IF NOT EXISTS history_recent JSONB; END IF; END $$;
`,
  },
};

/** The blocks table and the history, created together by the first write with history. */
const BLOCKS_WITH_HISTORY: StoreTable = {
  name: `${BLOCKS_TABLE.name}+${HISTORY_TABLE.name}`,
  ddl: {
    sqlite: `${BLOCKS_TABLE.ddl.sqlite};\n${HISTORY_TABLE.ddl.sqlite}`,
    postgres: `${BLOCKS_TABLE.ddl.postgres}\n${HISTORY_TABLE.ddl.postgres}`,
  },
};

/** The `history` option checked: `undefined` when off (`false`), else the retention (default 50). */
export function versionRetention(option: unknown, owner: string): number | undefined {
  if (option === false) return undefined;
  if (option === undefined || option === true) return DEFAULT_HISTORY_RETENTION;
  const retention =
    typeof option === "object" && option !== null
      ? ((option as { retention?: unknown }).retention ?? DEFAULT_HISTORY_RETENTION)
      : undefined;
  if (typeof retention !== "number" || !Number.isSafeInteger(retention) || retention < 1) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: history must be true, false or { retention: a positive integer }, got ${describeValue(option)}`,
    );
  }
  return retention;
}

export function sourceText(write: BlockWrite | undefined): string {
  return JSON.stringify(write?.source ?? { kind: "api", name: "set" });
}

const SQLITE_NOW = raw("strftime('%Y-%m-%dT%H:%M:%fZ', 'now')");

/**
 * SQLite: the slot write that records the block's row as its newest version, run right after the write of
 * the row in the same transaction, and only when that write changed the row (`changes()`, the statement
 * just before). It reads the block's row (its content and number) and the slot it overwrites.
 */
function recordFromRow(key: string, source: string, retention: number): SqlStatement {
  return sql`INSERT INTO contextblocks_block_history (label, slot, version, content, source, written_at)
SELECT label, history_version % ${retention}, history_version, content, ${source}, ${SQLITE_NOW}
FROM cf_agents_context_blocks WHERE label = ${key} AND changes() > 0
ON CONFLICT(label, slot) DO UPDATE SET version = excluded.version, content = excluded.content,
  source = excluded.source, written_at = excluded.written_at`;
}

/**
 * SQLite on a client that cannot run a group atomically: the slot write with the values the block write
 * returned (its `RETURNING` row), so no other writer's statement in between can change what is recorded.
 */
export function recordReturnedVersion(
  row: { label?: unknown; content?: unknown; history_version?: unknown },
  source: string,
  retention: number,
): SqlStatement {
  const version = Number(row.history_version);
  return sql`INSERT INTO contextblocks_block_history (label, slot, version, content, source, written_at)
VALUES (${String(row.label)}, ${version % retention}, ${version}, ${String(row.content)}, ${source}, ${SQLITE_NOW})
ON CONFLICT(label, slot) DO UPDATE SET version = excluded.version, content = excluded.content,
  source = excluded.source, written_at = excluded.written_at`;
}

/** What a SQLite block write returns without an atomic group: the row it wrote (none: it wrote nothing). */
const RETURNED_ROW = raw("RETURNING label, content, history_version");

/** Postgres: the same slot write, fed by the `written` CTE (the rows the block write returned). */
function recordFromWritten(source: string, retention: number): SqlStatement {
  return sql`INSERT INTO contextblocks_block_history (label, slot, version, content, source)
SELECT label, (history_version % ${retention})::int, history_version, content, ${source} FROM written
ON CONFLICT (label, slot) DO UPDATE SET version = excluded.version, content = excluded.content,
  source = excluded.source, written_at = NOW()`;
}

/**
 * The statements of `set` with history: the upsert raises the row's number only when the content changes
 * (an unchanged write writes nothing and adds no version). Postgres: one statement (a data-modifying CTE,
 * so under READ COMMITTED a concurrent writer's number is read under the row lock and never taken twice).
 */
export function upsertWithVersion(
  dialect: SqlDialect,
  key: string,
  content: string,
  source: string,
  retention: number,
  atomic = true,
): SqlStatement[] {
  if (dialect === "sqlite") {
    // Without an atomic group the version is recorded afterwards from the returned row (`recordReturnedVersion`).
    const upsert = sql`INSERT INTO cf_agents_context_blocks (label, content, history_version) VALUES (${key}, ${content}, 1)
ON CONFLICT(label) DO UPDATE SET content = excluded.content, updated_at = CURRENT_TIMESTAMP,
  history_version = history_version + 1
WHERE content IS NOT excluded.content`;
    // In one transaction the version follows `changes()` and reads no row; `RETURNING` reads one.
    return atomic ? [upsert, recordFromRow(key, source, retention)] : [sql`${upsert} ${RETURNED_ROW}`];
  }
  return [
    sql`WITH written AS (
  INSERT INTO cf_agents_context_blocks AS block (label, content, history_version) VALUES (${key}, ${content}, 1)
  ON CONFLICT (label) DO UPDATE SET content = excluded.content, updated_at = NOW(),
    history_version = block.history_version + 1
  WHERE block.content IS DISTINCT FROM excluded.content
  RETURNING label, content, history_version
)
${recordFromWritten(source, retention)}`,
  ];
}

/**
 * The conditional write of `setIf`: `content` replaces the row only while it holds `expected`. An absent row
 * counts as `""`, so with `expected === ""` the row is inserted when missing. With `history`, the row's
 * number goes up and the version is recorded in the same transaction. The statement at `applied` returns
 * one row with `applied` (more than 0 when the write happened). On SQLite without an atomic group the write
 * itself returns the row it wrote instead (none: not applied), so no statement another writer runs between
 * ours decides the outcome, and the caller records the version from that row (`recordReturnedVersion`).
 */
export function conditionalWrite(
  dialect: SqlDialect,
  key: string,
  expected: string,
  content: string,
  history: { source: string; retention: number } | undefined,
  atomic = true,
): { statements: SqlStatement[]; applied: number } {
  const now = dialect === "sqlite" ? sql`CURRENT_TIMESTAMP` : sql`NOW()`;
  const raise = history === undefined ? sql`` : sql`, history_version = block.history_version + 1`;
  const conflict = dialect === "sqlite" ? sql`ON CONFLICT(label)` : sql`ON CONFLICT (label)`;
  const write =
    expected !== ""
      ? sql`UPDATE cf_agents_context_blocks AS block SET content = ${content}, updated_at = ${now}${raise}
WHERE label = ${key} AND content = ${expected}`
      : history === undefined
        ? sql`INSERT INTO cf_agents_context_blocks AS block (label, content) VALUES (${key}, ${content})
${conflict} DO UPDATE SET content = excluded.content, updated_at = ${now} WHERE block.content = ''`
        : sql`INSERT INTO cf_agents_context_blocks AS block (label, content, history_version)
VALUES (${key}, ${content}, 1)
${conflict} DO UPDATE SET content = excluded.content, updated_at = ${now}${raise} WHERE block.content = ''`;
  if (dialect === "sqlite") {
    if (!atomic) {
      // A table without history may lack `history_version` (one agents created): return only the label.
      const returning = history === undefined ? raw("RETURNING label") : RETURNED_ROW;
      return { statements: [sql`${write} ${returning}`], applied: 0 };
    }
    // `changes()` still counts the conditional write after the SELECT: a SELECT leaves it as it was.
    const statements = [write, sql`SELECT changes() AS applied`];
    if (history !== undefined) statements.push(recordFromRow(key, history.source, history.retention));
    return { statements, applied: 1 };
  }
  // Under READ COMMITTED an UPDATE / ON CONFLICT re-checks its condition on the row a concurrent writer
  // committed, so exactly one of two writers expecting the same text applies.
  const returning =
    history === undefined ? sql`RETURNING label` : sql`RETURNING label, content, history_version`;
  const recorded =
    history === undefined
      ? sql``
      : sql`, recorded AS (${recordFromWritten(history.source, history.retention)})`;
  return {
    statements: [
      sql`WITH written AS (${write} ${returning})${recorded} SELECT COUNT(*)::int AS applied FROM written`,
    ],
    applied: 0,
  };
}

/** True when `error` says a part of the history's schema (a table, or the version column) is missing. */
export function isMissingHistorySchema(error: unknown, dialect: SqlDialect): boolean {
  if (dialect === "postgres") return isMissingTable(error, HISTORY_TABLE, "postgres");
  if (
    isMissingTable(error, HISTORY_TABLE, "sqlite") ||
    isMissingTable(error, BLOCKS_TABLE, "sqlite") ||
    isMissingTableError(error, BATCHES_TABLE_NAME)
  ) {
    return true;
  }
  return isMissingColumn(error, VERSION_COLUMN) || isMissingColumn(error, RECENT_COLUMN);
}

/** SQLite: true when `error` says `column` of the blocks table is missing. */
function isMissingColumn(error: unknown, column: string): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const message = current.message.toLowerCase();
    if (
      (message.includes("no such column:") && message.includes(column)) ||
      message.includes(`has no column named ${column}`)
    ) {
      return true;
    }
    current = current.cause;
  }
  return false;
}

/** The error for a missing history table or column when the store may not create it. */
export function missingHistoryError(owner: string, cause: unknown): ContextError {
  return new ContextError(
    "PROVIDER_FAILED",
    `${owner}: the table ${HISTORY_TABLE.name} or the column cf_agents_context_blocks.${VERSION_COLUMN} is ` +
      "missing and createTables is false; run @contextblocks/postgres's schema.sql (also exported as " +
      "POSTGRES_SCHEMA) once in the database (it adds both), or pass versions: false",
    { cause },
  );
}

/**
 * Creates what history needs, idempotently: both tables, and the version column on a blocks table created
 * without it, set from the versions already kept. Postgres: one transaction behind the schema lock.
 * SQLite (no `ADD COLUMN IF NOT EXISTS`): the column is looked for first, and a concurrent connection that
 * added it first ("duplicate column") counts as done.
 */
export async function ensureHistorySchema(client: SqlClient): Promise<void> {
  // Both tables in one group (one transaction behind the schema lock on Postgres): a first write pays once.
  await ensureTable(client, BLOCKS_WITH_HISTORY);
  if (client.dialect === "postgres") return;
  // The number is set from the versions already kept only when its column is new.
  await addColumnOnce(client, VERSION_COLUMN, [
    raw(`ALTER TABLE cf_agents_context_blocks ADD COLUMN ${VERSION_COLUMN} INTEGER NOT NULL DEFAULT 0`),
    raw(`UPDATE cf_agents_context_blocks SET ${VERSION_COLUMN} = (
  SELECT MAX(version) FROM contextblocks_block_history AS kept WHERE kept.label = cf_agents_context_blocks.label)
WHERE label IN (SELECT label FROM contextblocks_block_history)`),
  ]);
  await addColumnOnce(client, RECENT_COLUMN, [
    raw(`ALTER TABLE cf_agents_context_blocks ADD COLUMN ${RECENT_COLUMN} TEXT`),
  ]);
}

/**
 * SQLite (no `ADD COLUMN IF NOT EXISTS`): runs `adding` when `column` is missing from the blocks table; a
 * concurrent connection that added it first ("duplicate column") counts as done.
 */
async function addColumnOnce(client: SqlClient, column: string, adding: SqlStatement[]): Promise<void> {
  try {
    await client.run(raw(`SELECT ${column} FROM cf_agents_context_blocks LIMIT 0`));
    return;
  } catch (error) {
    if (!isMissingColumn(error, column)) throw error;
  }
  try {
    await client.batch(adding);
  } catch (error) {
    if (!(error instanceof Error && /duplicate column/i.test(error.message))) throw error;
  }
}

interface VersionRow {
  version: unknown;
  content: unknown;
  source: unknown;
  written_at: unknown;
}

/**
 * The kept versions of `key`, newest first: at most `limit`, or only `version`. "Kept" is decided by the
 * block row's number: the newest `retention` up to it (slots a smaller retention no longer uses, or a row
 * `agents/context` replaced, never show through). They are gathered from the row's recent versions, its
 * batches and the per-version ring (large contents, clients without transactions, earlier releases).
 */
export async function readVersions(
  client: SqlClient,
  key: string,
  retention: number,
  query: { limit?: number; version?: number },
): Promise<VersionRow[]> {
  const limit = Math.min(query.limit ?? retention, retention);
  // A database from before recent versions (no column, no batches table yet) reads as having none there.
  const dialect = client.dialect;
  const [row] = await client
    .run<{ history_version: unknown; history_recent?: unknown }>(
      sql`SELECT history_version, history_recent FROM cf_agents_context_blocks WHERE label = ${key}`,
    )
    .catch((error: unknown) => {
      if (dialect !== "sqlite" || !isMissingColumn(error, RECENT_COLUMN)) throw error;
      return client.run<{ history_version: unknown; history_recent?: unknown }>(
        sql`SELECT history_version FROM cf_agents_context_blocks WHERE label = ${key}`,
      );
    });
  if (row === undefined) return [];
  const newest = Number(row.history_version);
  const oldest = newest - retention;
  const only = query.version === undefined ? sql`` : sql` AND version = ${query.version}`;
  const batches = await client
    .run<{ versions: unknown }>(sql`SELECT versions FROM contextblocks_block_history_batches
WHERE label = ${key} AND last_version > ${oldest} ORDER BY last_version DESC`)
    .catch((error: unknown) => {
      const missing =
        dialect === "sqlite"
          ? isMissingTableError(error, BATCHES_TABLE_NAME)
          : isMissingTable(error, HISTORY_TABLE, dialect);
      if (!missing) throw error;
      return [];
    });
  const single = await client.run<VersionRow>(sql`SELECT version, content, source, written_at
FROM contextblocks_block_history WHERE label = ${key} AND version <= ${newest} AND version > ${oldest}${only}`);
  // The same version can sit in two places for a moment (a flush before a write that changed nothing):
  // the row's copy first, then the newest batch's.
  const found = new Map<number, VersionRow>();
  const keep = (entry: VersionRow) => {
    const version = Number(entry.version);
    if (version <= oldest || version > newest || found.has(version)) return;
    if (query.version !== undefined && version !== query.version) return;
    found.set(version, entry);
  };
  for (const entry of recentEntries(row.history_recent)) keep(entry);
  for (const batch of batches) for (const entry of recentEntries(batch.versions)) keep(entry);
  for (const entry of single) keep(entry);
  return [...found.values()].sort((a, b) => Number(b.version) - Number(a.version)).slice(0, limit);
}

export function toVersion(row: VersionRow, owner: string): BlockVersion {
  const writtenAt =
    row.written_at instanceof Date
      ? row.written_at.toISOString()
      : new Date(String(row.written_at)).toISOString();
  let source: WriteSource;
  try {
    source = JSON.parse(String(row.source)) as WriteSource;
  } catch {
    throw new ContextError("PROVIDER_FAILED", `${owner}: a stored version's source is not JSON`);
  }
  return { version: Number(row.version), content: String(row.content), writtenAt, source };
}
