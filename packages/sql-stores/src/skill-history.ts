import type { BlockWrite } from "@contextblocks/core";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw, type SqlDialect } from "@contextblocks/sql/store-kit";
import { sourceText } from "./block-history.js";
import type { StoreTable } from "./tables.js";

/**
 * Entry versions of `SqlSkillProvider`: one row per version of a skill, keyed (scope, key, version), in a
 * table of its own (`contextblocks_skills` is not altered, so a database an older release wrote is read as
 * it is). A skill's rows outlive the skill: deleting it keeps them, and writing the key again counts on from
 * the newest. The primary key indexes every read and write: a write reads the key's newest version (one row)
 * and writes one, and drops the versions past the retention.
 */
export const SKILL_HISTORY_TABLE: StoreTable = {
  name: "contextblocks_skill_history",
  ddl: {
    sqlite: `CREATE TABLE IF NOT EXISTS contextblocks_skill_history (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  content TEXT NOT NULL,
  source TEXT NOT NULL,
  written_at TEXT NOT NULL,
  PRIMARY KEY (scope, key, version)
) WITHOUT ROWID`,
    postgres: `CREATE TABLE IF NOT EXISTS contextblocks_skill_history (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  version BIGINT NOT NULL,
  content TEXT NOT NULL,
  source TEXT NOT NULL,
  written_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  PRIMARY KEY (scope, key, version)
);
`,
  },
};

const SQLITE_NOW = raw("strftime('%Y-%m-%dT%H:%M:%fZ', 'now')");

/**
 * The statements that record `content` as the skill's next version, run after its upsert in the same group:
 * only when it differs from the newest version kept (an unchanged write, or one that changes only the
 * description, is no version), then the versions past `retention` are dropped. Postgres first takes a
 * transaction-scoped advisory lock on the (scope, key) pair, so two writers of one skill never read the same
 * newest number (each statement of the group then sees the other's committed version).
 */
export function recordSkillVersion(
  dialect: SqlDialect,
  scope: string,
  key: string,
  content: string,
  write: BlockWrite | undefined,
  retention: number,
): SqlStatement[] {
  const source = sourceText(write);
  const newest = sql`(SELECT MAX(version) FROM contextblocks_skill_history WHERE scope = ${scope} AND key = ${key})`;
  const unchanged = sql`SELECT 1 FROM contextblocks_skill_history WHERE scope = ${scope} AND key = ${key}
  AND version = ${newest} AND content = ${content}`;
  const prune = sql`DELETE FROM contextblocks_skill_history WHERE scope = ${scope} AND key = ${key}
  AND version <= ${newest} - ${retention}`;
  if (dialect === "sqlite") {
    return [
      sql`INSERT INTO contextblocks_skill_history (scope, key, version, content, source, written_at)
SELECT ${scope}, ${key}, COALESCE(${newest}, 0) + 1, ${content}, ${source}, ${SQLITE_NOW}
WHERE NOT EXISTS (${unchanged})`,
      prune,
    ];
  }
  return [
    sql`SELECT pg_advisory_xact_lock(hashtextextended(${scope}::text || chr(1) || ${key}::text, 7))`,
    sql`INSERT INTO contextblocks_skill_history (scope, key, version, content, source)
SELECT ${scope}::text, ${key}::text, COALESCE(${newest}, 0) + 1, ${content}::text, ${source}::text
WHERE NOT EXISTS (${unchanged})`,
    prune,
  ];
}

/** The kept versions of one skill, newest first: at most `limit`, or only `version`. */
export function selectSkillVersions(
  scope: string,
  key: string,
  query: { limit: number; version?: number | undefined },
): SqlStatement {
  const only = query.version === undefined ? sql`` : sql` AND version = ${query.version}`;
  return sql`SELECT version, content, source, written_at FROM contextblocks_skill_history
WHERE scope = ${scope} AND key = ${key}${only} ORDER BY version DESC LIMIT ${query.limit}`;
}
