import type { SqlSource } from "@contextblocks/sql";
import { type BlockStoreOptions, blockStoreOptions, SqlContextProvider } from "@contextblocks/sql-stores";
import { sqliteClient } from "./sqlite-client.js";

const OWNER = "SqliteContextProvider";

/** Options of `SqliteContextProvider` (the object form of its second argument): label, namespace, onStatement. */
export type SqliteContextProviderOptions = BlockStoreOptions;

/**
 * A writable context block stored as one row of `cf_agents_context_blocks` (the table `agents/context`
 * uses) in any SQLite database: a Durable Object's `ctx.storage`, an object with a tagged-template `sql`
 * (an `agents` Agent), a better-sqlite3 `Database`, or a `SqlClient`. `SqlContextProvider` of
 * `@contextblocks/sql-stores` on a SQLite client (the same class Postgres uses, with SQLite's statements).
 *
 * The table is created on the first `set`; `get` on a database without it reads as "no content" and writes
 * nothing. `get` of an existing row is one statement and one row read.
 *
 * ```ts
 * new SqliteContextProvider(this, "memory");                 // agents/context's form (AgentContextProvider)
 * new SqliteContextProvider(ctx.storage, { label: "memory", namespace: "tenant-a" });
 * ```
 */
export class SqliteContextProvider extends SqlContextProvider {
  constructor(source: SqlSource, labelOrOptions?: string | SqliteContextProviderOptions) {
    const options = blockStoreOptions(labelOrOptions, OWNER);
    const { label, namespace } = options;
    super(sqliteClient(source, options.onStatement, OWNER), { label, namespace, owner: OWNER });
  }
}
