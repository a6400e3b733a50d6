import type { SqlSource, StatementObserver } from "@contextblocks/sql";
import { SqlSessionRegistry } from "@contextblocks/sql-stores";
import { sqliteClient } from "./sqlite-client.js";

/** Options of `SqliteSessionRegistry`. */
export interface SqliteSessionRegistryOptions {
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * The named sessions of a SQLite database (sessions' `SessionRegistry`): one row per session in
 * `assistant_sessions`, the table Cloudflare agents' Sessions API keeps, created (only it) on the first
 * write. `SqlSessionRegistry` of `@contextblocks/sql-stores` on SQLite.
 *
 * ```ts
 * const registry = new SqliteSessionRegistry(ctx.storage);
 * const info = await registry.create(crypto.randomUUID(), "Support chat");
 * ```
 */
export class SqliteSessionRegistry extends SqlSessionRegistry {
  constructor(source: SqlSource, options: SqliteSessionRegistryOptions = {}) {
    const owner = "SqliteSessionRegistry";
    super(sqliteClient(source, options?.onStatement, owner), { owner });
  }
}
