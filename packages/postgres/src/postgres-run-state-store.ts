import type { RunStateStore } from "@contextblocks/sessions/store-kit";
import type { StatementObserver } from "@contextblocks/sql";
import { SqlRunStateStore } from "@contextblocks/sql-stores";
import { type PostgresSource, postgresClient } from "./client.js";

/** Options of `PostgresRunStateStore`. */
export interface PostgresRunStateStoreOptions {
  /** Create the table on first save when it is missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * Where a pipeline keeps its plugins' state, per session (`RunStateStore`: `load`, `save`, `delete`), in
 * Postgres: one row per (session id, source id) in `contextblocks_run_state`, created (only it) on the first
 * save. A save is one transaction. `SqlRunStateStore` of `@contextblocks/sql-stores` on Postgres.
 */
export class PostgresRunStateStore extends SqlRunStateStore implements RunStateStore {
  constructor(source: PostgresSource, options: PostgresRunStateStoreOptions = {}) {
    const owner = "PostgresRunStateStore";
    super(postgresClient(source, options?.onStatement, owner), {
      owner,
      createTables: options?.createTables,
    });
  }
}
