import { sql } from "@contextblocks/sql";

/** The table `agents/context` keeps its blocks in; sharing it means existing data is found. */
export const TABLE_NAME = "cf_agents_context_blocks";

/** The table exactly as `agents/context` declares it, so either library can create it first. */
export const CREATE_TABLE = sql`CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
  label TEXT PRIMARY KEY,
  content TEXT NOT NULL,
  updated_at DATETIME DEFAULT CURRENT_TIMESTAMP
)`;

const MISSING_TABLE = /no such table:\s*(?:main\.)?cf_agents_context_blocks\b/i;

/**
 * True when `error` (or an error in its `cause` chain, as an agents `SqlError` wraps it) says the blocks
 * table does not exist yet. Durable Objects, better-sqlite3 and agents all carry SQLite's message.
 */
export function isMissingTableError(error: unknown): boolean {
  return saysMissingTable(error, MISSING_TABLE);
}

/** True when `error` or an error in its `cause` chain has a message matching `pattern`. */
export function saysMissingTable(error: unknown, pattern: RegExp): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (pattern.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}
