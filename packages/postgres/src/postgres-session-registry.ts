import type { SessionRegistry } from "@contextblocks/sessions/store-kit";
import type { StatementObserver } from "@contextblocks/sql";
import { SqlSessionRegistry } from "@contextblocks/sql-stores";
import { type PostgresSource, postgresClient } from "./client.js";

/** Options of `PostgresSessionRegistry`. */
export interface PostgresSessionRegistryOptions {
  /** Create the table on first write when it is missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * The named sessions of a Postgres database (`SessionRegistry`: create, get, list, update, touch, addUsage,
 * delete): one row per session in `assistant_sessions`, the table Cloudflare agents' Sessions API keeps,
 * created (only it) on the first write. Times read as SQLite writes them (`YYYY-MM-DD HH:MM:SS.SSS`, UTC).
 * `SqlSessionRegistry` of `@contextblocks/sql-stores` on Postgres.
 */
export class PostgresSessionRegistry extends SqlSessionRegistry implements SessionRegistry {
  constructor(source: PostgresSource, options: PostgresSessionRegistryOptions = {}) {
    const owner = "PostgresSessionRegistry";
    super(postgresClient(source, options?.onStatement, owner), {
      owner,
      createTables: options?.createTables,
    });
  }
}
