import { ContextError } from "@contextblocks/core";
import type { SqlClient, SqlStatement } from "@contextblocks/sql";

/**
 * The tables and indexes the Postgres providers use, as seed 004 lists them (the session tables come with
 * the session provider). Shipped as `schema.sql` too: run it once where the database user may not create
 * tables at run time, and pass `createTables: false`.
 *
 * One index beyond the seed's: `idx_search_entries_key_fts`, so a search also finds an entry by the words
 * of its key (a model's `set_context` key is a slug of the entry's title).
 */
export const POSTGRES_SCHEMA = `CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
  label TEXT PRIMARY KEY,
  content TEXT NOT NULL,
  updated_at TIMESTAMPTZ DEFAULT NOW()
);

CREATE TABLE IF NOT EXISTS cf_agents_search_entries (
  label TEXT NOT NULL,
  key TEXT NOT NULL,
  content TEXT NOT NULL,
  content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  created_at TIMESTAMPTZ DEFAULT NOW(),
  updated_at TIMESTAMPTZ DEFAULT NOW(),
  PRIMARY KEY (label, key)
);

CREATE INDEX IF NOT EXISTS idx_search_entries_fts
  ON cf_agents_search_entries USING GIN (content_tsv);

CREATE INDEX IF NOT EXISTS idx_search_entries_key_fts
  ON cf_agents_search_entries USING GIN (to_tsvector('english', key));
`;

/** A statement without values, from SQL text we wrote ourselves. */
export function plainStatement(text: string): SqlStatement {
  return Object.freeze({ strings: Object.freeze([text]), values: Object.freeze([]) });
}

/**
 * `CREATE … IF NOT EXISTS` is not safe against itself: two connections creating the same table at once can
 * fail on the system catalogue's unique index. A transaction-scoped advisory lock (an arbitrary fixed key,
 * "cbpg" in ASCII) makes concurrent first writers take turns; the second finds everything in place.
 */
const SCHEMA_LOCK = plainStatement("SELECT pg_advisory_xact_lock(1667396711)");

/** The schema as statements, run as one transaction behind the advisory lock. */
export function schemaStatements(): SqlStatement[] {
  const statements = POSTGRES_SCHEMA.split(";\n")
    .map((text) => text.trim())
    .filter((text) => text.length > 0)
    .map(plainStatement);
  return [SCHEMA_LOCK, ...statements];
}

/** One schema creation per client at a time; later calls after a success reuse it. */
const created = new WeakMap<SqlClient, Promise<void>>();

export function ensureSchema(client: SqlClient): Promise<void> {
  let pending = created.get(client);
  if (pending === undefined) {
    pending = client.batch(schemaStatements()).then(() => undefined);
    created.set(client, pending);
    // A failure (no CREATE permission, connection lost) is not remembered: the next call tries again.
    pending.catch(() => {
      if (created.get(client) === pending) created.delete(client);
    });
  }
  return pending;
}

/** SQLSTATE 42P01, `undefined_table`. */
export function isUndefinedTable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    if ((current as { code?: unknown }).code === "42P01") return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs `work`; when a table is missing, creates the schema and runs it again (with `create`), or throws an
 * error that says how to create the tables (without). `provider` names the caller in that error.
 */
export async function withTables<T>(
  client: SqlClient,
  create: boolean,
  provider: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isUndefinedTable(error)) throw error;
    if (!create) throw missingTables(provider, error);
    await ensureSchema(client);
    return work();
  }
}

/** The error for a missing table when the provider may not create it. */
export function missingTables(provider: string, cause: unknown): ContextError {
  return new ContextError(
    "PROVIDER_FAILED",
    `${provider}: the table it uses does not exist and createTables is false; run @contextblocks/postgres's ` +
      "schema.sql (also exported as POSTGRES_SCHEMA) once in the database",
    { cause },
  );
}
