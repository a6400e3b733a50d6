import { ContextError } from "@contextblocks/core";
import { type SqlClient, sql } from "@contextblocks/sql";
import { ensureTable, isMissingTable } from "@contextblocks/sql-stores";
import { SESSION_TABLES, SESSION_TABLES_VERSION } from "./schema.js";
import { migrateSessionTables, reportUnmigratable } from "./session-migration.js";

const MARKER_TABLE = { name: "contextblocks_schema", ddl: { sqlite: "", postgres: "" } };

/** Clients whose session tables were found at this release's version: nothing is read again. */
const current = new WeakSet<SqlClient>();
const checking = new WeakMap<SqlClient, Promise<void>>();

/**
 * Brings session tables an earlier release (or Cloudflare agents) created to this release's schema before a
 * store's first statement on `client`: one read of the version marker per client, and the migration run
 * only when the marker is missing or older. No session tables at all: a read
 * creates nothing (it finds nothing), a write (`forWrite`) creates them, marker included.
 */
export function sessionTablesReady(
  client: SqlClient,
  createTables: boolean,
  owner: string,
  forWrite: boolean,
): Promise<void> {
  if (current.has(client)) return Promise.resolve();
  let pending = checking.get(client);
  if (pending === undefined) {
    pending = check(client, createTables, owner, forWrite).finally(() => checking.delete(client));
    checking.set(client, pending);
  }
  return pending;
}

async function check(
  client: SqlClient,
  createTables: boolean,
  owner: string,
  forWrite: boolean,
): Promise<void> {
  const state = await markerState(client);
  if (state === "absent") {
    if (!forWrite || !createTables) return;
    try {
      // Every statement of the session tables (another writer may have created some since the check).
      await ensureTable(client, SESSION_TABLES);
    } catch (error) {
      throw await reportUnmigratable(client, owner, error);
    }
    current.add(client);
    return;
  }
  if (state === "old") {
    if (!createTables) {
      throw new ContextError(
        "PROVIDER_FAILED",
        `${owner}: the session tables were created by an earlier release (no contextblocks_schema version ${SESSION_TABLES_VERSION}) and createTables is false; run @contextblocks/postgres's schema.sql (POSTGRES_SCHEMA) or createTables() once to bring them up to date`,
      );
    }
    await migrateSessionTables(client, owner);
  }
  current.add(client);
}

async function markerState(client: SqlClient): Promise<"current" | "old" | "absent"> {
  try {
    const [row] = await client.run<{ version: unknown }>(
      sql`SELECT version FROM contextblocks_schema WHERE part = 'sessions'`,
    );
    if (Number(row?.version ?? 0) >= SESSION_TABLES_VERSION) return "current";
  } catch (error) {
    if (!isMissingTable(error, MARKER_TABLE, "postgres")) throw error;
  }
  const [found] = await client.run<{ present: boolean }>(
    sql`SELECT to_regclass('assistant_messages') IS NOT NULL AS present`,
  );
  return found?.present === true ? "old" : "absent";
}
