import { ContextError } from "@contextblocks/core";
import { type SqlClient, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { SCHEMA_LOCK, tableStatements } from "@contextblocks/sql-stores";
import { SESSION_TABLES, SESSION_TABLES_VERSION } from "./schema.js";

/**
 * Brings session tables an earlier release (or Cloudflare agents) created to this release's schema: every
 * statement of `SESSION_TABLES` (each `IF NOT EXISTS`, so idempotent) in one transaction behind the schema
 * lock, so two writers opening the database at once take turns and the second, finding the marker current
 * under the lock, changes nothing; the marker is the group's last statement. Loaded only when the marker is
 * missing or older.
 *
 * What cannot be migrated is reported, not opened: an id stored in two sessions (an earlier release checked
 * ids across sessions without a unique index) blocks `idx_assistant_msg_id`'s unique build; the error names
 * the ids and their sessions, and the transaction leaves the tables as they were. Refused rather than
 * opened with an ordinary index, because opened, two appends of one id to two sessions at once could both
 * store it again, and a store told about its duplicates only in a log would keep serving them.
 */
export async function migrateSessionTables(client: SqlClient, owner: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.batch([SCHEMA_LOCK, stopWhenCurrent(), ...tableStatements(SESSION_TABLES, "postgres")]);
      return;
    } catch (error) {
      const state = (error as { code?: unknown } | null)?.code;
      // Another writer migrated them while this one waited for the lock: nothing to do.
      if (state === "P0001" && String((error as Error).message).includes(alreadyCurrent)) return;
      // A reader of an earlier release held one session table and waited for another this one altered.
      if (state === "40P01" && attempt < deadlockAttempts) continue;
      throw await reportUnmigratable(client, owner, error);
    }
  }
}

const alreadyCurrent = "contextblocks: the session tables are already current";

/**
 * Under the lock, ends the transaction before any table is touched when the marker is current: the second
 * of two writers opening the database at once alters nothing, so it cannot deadlock with the first's readers.
 * A function, not a constant: schema.ts and this module import each other.
 */
function stopWhenCurrent() {
  return raw(`DO $$ BEGIN IF to_regclass('contextblocks_schema') IS NOT NULL THEN
  IF EXISTS (SELECT 1 FROM contextblocks_schema WHERE part = 'sessions' AND version >= ${SESSION_TABLES_VERSION}) THEN
  RAISE EXCEPTION '${alreadyCurrent}'; END IF; END IF; END $$`);
}

/** How many times a migration chosen as a deadlock's victim runs again. */
const deadlockAttempts = 5;

/** How many duplicated ids the report names (the count says how many there are in all). */
const named = 20;

/**
 * The error to throw after a migration failed with `error`: for a unique violation, a `ContextError` naming
 * the ids stored in more than one session and their sessions; anything else as it was.
 */
export async function reportUnmigratable(client: SqlClient, owner: string, error: unknown): Promise<unknown> {
  if ((error as { code?: unknown } | null)?.code !== "23505") return error;
  const rows = await client.run<{ id: string; sessions: string; total: unknown }>(sql`
SELECT id, json_agg(session_id ORDER BY session_id)::text AS sessions, count(*) OVER () AS total
FROM assistant_messages GROUP BY id HAVING count(*) > 1 ORDER BY id LIMIT ${named}::int`);
  if (rows.length === 0) return error;
  const total = Number(rows[0]?.total ?? rows.length);
  const listed = rows
    .map((row) => {
      const sessions = (JSON.parse(row.sessions) as string[]).map((session) => JSON.stringify(session));
      return `${JSON.stringify(row.id)} in sessions ${sessions.join(", ")}`;
    })
    .join("; ");
  return new ContextError(
    "PROVIDER_FAILED",
    `${owner}: the session tables cannot be brought to this release's schema: ${total} message id${
      total === 1 ? " is" : "s are"
    } stored in more than one session, and an id must be unique in the database (the unique index idx_assistant_msg_id keeps two sessions from storing one id at once): ${listed}${
      total > rows.length ? `; and ${total - rows.length} more` : ""
    }. Nothing was changed: give all but one copy of each a new id, or delete it, then open the database again`,
    { cause: error },
  );
}
