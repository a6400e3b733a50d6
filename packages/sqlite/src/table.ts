import { isMissingTableError, sql } from "@contextblocks/sql";

/** The table exactly as `agents/context` declares it, so either library can create it first. */
export const CREATE_TABLE = sql`CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
  label TEXT PRIMARY KEY,
  content TEXT NOT NULL,
  updated_at DATETIME DEFAULT CURRENT_TIMESTAMP
)`;

/** True when `error` says the blocks table does not exist yet (see `isMissingTableError` in `sql`). */
export function isBlocksTableMissing(error: unknown): boolean {
  return isMissingTableError(error, "cf_agents_context_blocks");
}
