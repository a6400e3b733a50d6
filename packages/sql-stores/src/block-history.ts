import {
  type BlockVersion,
  type BlockWrite,
  ContextError,
  describeValue,
  type WriteSource,
} from "@contextblocks/core";
import { type SqlClient, type SqlDialect, type SqlStatement, sql } from "@contextblocks/sql";
import { BLOCKS_TABLE, type StoreTable } from "./tables.js";

/** Versions a block keeps when history is on and no retention is given. */
export const DEFAULT_HISTORY_RETENTION = 50;

/**
 * `contextblocks_block_history`: a ring of `retention` slots per block row label. Version `v` lives in slot
 * `v % retention`, so a write overwrites the oldest slot in place: one row written per write whatever the
 * number of versions, and no delete. Its DDL also creates the blocks table, so the first write of a block
 * with history creates both in one group.
 */
export const HISTORY_TABLE: StoreTable = {
  name: "contextblocks_block_history",
  ddl: {
    sqlite: `${BLOCKS_TABLE.ddl.sqlite};
CREATE TABLE IF NOT EXISTS contextblocks_block_history (
  label TEXT NOT NULL,
  slot INTEGER NOT NULL,
  version INTEGER NOT NULL,
  content TEXT NOT NULL,
  source TEXT NOT NULL,
  written_at TEXT NOT NULL,
  PRIMARY KEY (label, slot)
) WITHOUT ROWID`,
    postgres: `${BLOCKS_TABLE.ddl.postgres.trim().replace(/;$/, "")};
CREATE TABLE IF NOT EXISTS contextblocks_block_history (
  label TEXT NOT NULL,
  slot INTEGER NOT NULL,
  version BIGINT NOT NULL,
  content TEXT NOT NULL,
  source TEXT NOT NULL,
  written_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  PRIMARY KEY (label, slot)
);
`,
  },
};

/** The `history` option checked: `undefined` when off, else the retention. */
export function historyRetention(option: unknown, owner: string): number | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return DEFAULT_HISTORY_RETENTION;
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

/**
 * The statement that records `content` as the next version of `key`, run after the block's write in the same
 * transaction. SQLite: only when that write changed the row (`changes()`, the statement just before). Postgres
 * (`changes()` has no equivalent): when the row now holds `content` and the newest version does not, a
 * separate statement, so under READ COMMITTED it sees a concurrent writer's version once its row lock is
 * released, and never takes the same version number.
 */
export function recordVersion(
  dialect: SqlDialect,
  key: string,
  content: string,
  source: string,
  retention: number,
): SqlStatement {
  if (dialect === "sqlite") {
    return sql`INSERT INTO contextblocks_block_history (label, slot, version, content, source, written_at)
SELECT ${key}, next.version % ${retention}, next.version, ${content}, ${source}, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM (SELECT COALESCE(MAX(version), 0) + 1 AS version FROM contextblocks_block_history WHERE label = ${key}) AS next
WHERE changes() > 0
ON CONFLICT(label, slot) DO UPDATE SET version = excluded.version, content = excluded.content,
  source = excluded.source, written_at = excluded.written_at`;
  }
  return sql`INSERT INTO contextblocks_block_history (label, slot, version, content, source)
SELECT ${key}, (latest.version + 1) % ${retention}, latest.version + 1, ${content}, ${source}
FROM (SELECT COALESCE(MAX(version), 0) AS version FROM contextblocks_block_history WHERE label = ${key}) AS latest
WHERE EXISTS (SELECT 1 FROM cf_agents_context_blocks WHERE label = ${key} AND content = ${content})
  AND NOT EXISTS (SELECT 1 FROM contextblocks_block_history
    WHERE label = ${key} AND version = latest.version AND content = ${content})
ON CONFLICT (label, slot) DO UPDATE SET version = excluded.version, content = excluded.content,
  source = excluded.source, written_at = NOW()`;
}

/**
 * The conditional write of `setIf`: `content` replaces the row only while it holds `expected`. An absent row
 * counts as `""`, so with `expected === ""` the row is inserted when missing.
 */
export function conditionalWrite(
  dialect: SqlDialect,
  key: string,
  expected: string,
  content: string,
): SqlStatement {
  const now = dialect === "sqlite" ? sql`CURRENT_TIMESTAMP` : sql`NOW()`;
  if (expected !== "") {
    return sql`UPDATE cf_agents_context_blocks SET content = ${content}, updated_at = ${now}
WHERE label = ${key} AND content = ${expected}`;
  }
  return dialect === "sqlite"
    ? sql`INSERT INTO cf_agents_context_blocks (label, content) VALUES (${key}, ${content})
ON CONFLICT(label) DO UPDATE SET content = excluded.content, updated_at = CURRENT_TIMESTAMP WHERE content = ''`
    : sql`INSERT INTO cf_agents_context_blocks AS block (label, content) VALUES (${key}, ${content})
ON CONFLICT (label) DO UPDATE SET content = excluded.content, updated_at = NOW() WHERE block.content = ''`;
}

/** After the conditional write: whether it applied (SQLite: `changes()`; Postgres: the row holds `content`). */
export function conditionApplied(dialect: SqlDialect, key: string, content: string): SqlStatement {
  return dialect === "sqlite"
    ? sql`SELECT changes() AS applied`
    : sql`SELECT COUNT(*)::int AS applied FROM cf_agents_context_blocks WHERE label = ${key} AND content = ${content}`;
}

interface VersionRow {
  version: unknown;
  content: unknown;
  source: unknown;
  written_at: unknown;
}

/** The kept versions of `key`, newest first: at most `limit`, or only `version`. */
export async function readVersions(
  client: SqlClient,
  key: string,
  retention: number,
  query: { limit?: number; version?: number },
): Promise<VersionRow[]> {
  // Versions older than the newest `retention` may linger in slots a smaller retention no longer uses.
  const limit = Math.min(query.limit ?? retention, retention);
  if (query.version !== undefined) {
    return client.query<VersionRow>`SELECT version, content, source, written_at FROM contextblocks_block_history
WHERE label = ${key} AND version = ${query.version}
  AND version > (SELECT MAX(version) FROM contextblocks_block_history WHERE label = ${key}) - ${retention}`;
  }
  return client.query<VersionRow>`SELECT version, content, source, written_at FROM contextblocks_block_history
WHERE label = ${key}
  AND version > (SELECT MAX(version) FROM contextblocks_block_history WHERE label = ${key}) - ${retention}
ORDER BY version DESC LIMIT ${limit}`;
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
