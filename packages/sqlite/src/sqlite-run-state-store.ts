import type { SqlSource, StatementObserver } from "@contextblocks/sql";
import { SqlRunStateStore } from "@contextblocks/sql-stores";
import { sqliteClient } from "./sqlite-client.js";

/** Options of `SqliteRunStateStore`. */
export interface SqliteRunStateStoreOptions {
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * Where a pipeline keeps its plugins' state, per session (sessions' `RunStateStore`: `load`, `save`,
 * `delete`), in a SQLite database: one row per (session id, source id) in `contextblocks_run_state`, a
 * table of its own created on the first save. `SqlRunStateStore` of `@contextblocks/sql-stores` on SQLite.
 *
 * ```ts
 * const runState = new SqliteRunStateStore(ctx.storage);
 * ```
 */
export class SqliteRunStateStore extends SqlRunStateStore {
  constructor(source: SqlSource, options: SqliteRunStateStoreOptions = {}) {
    const owner = "SqliteRunStateStore";
    super(sqliteClient(source, options?.onStatement, owner), { owner });
  }
}
