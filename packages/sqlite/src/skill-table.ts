import { isMissingTableError, sql } from "@contextblocks/sql";

/** The table `SqliteSkillProvider` keeps skills in: one row per (scope, key). */
export const SKILL_TABLE_NAME = "contextblocks_skills";

/**
 * One row per skill. `scope` is the block's storage key (label, or namespace and label, as
 * `SqliteContextProvider` stores it). The primary key indexes (scope, key): `load`, `set` and `delete`
 * touch one row whatever the number of skills. `description` comes before `content`, so the listing
 * (`key`, `description`) never reads a large content's overflow pages.
 */
export const CREATE_SKILL_TABLE = sql`CREATE TABLE IF NOT EXISTS contextblocks_skills (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  description TEXT,
  content TEXT NOT NULL,
  updated_at DATETIME DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (scope, key)
)`;

/** True when `error` says the skills table does not exist yet (nothing was ever written). */
export function isMissingSkillTableError(error: unknown): boolean {
  return isMissingTableError(error, SKILL_TABLE_NAME);
}
