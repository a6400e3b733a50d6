import type { SqlSource } from "@contextblocks/sql";
import { type BlockStoreOptions, blockStoreOptions, SqlContextProvider } from "@contextblocks/sql-stores";
import { sqliteClient } from "./sqlite-client.js";

const OWNER = "SqliteContextProvider";

/** Options of `SqliteContextProvider` (the object form of its second argument). */
export interface SqliteContextProviderOptions extends BlockStoreOptions {
  /**
   * Versions for `ContextBlocks.blockVersions` / `restoreBlock`. On by default (the last 50; the frozen prompt's store, `"_system_prompt"`, keeps none unless asked);
   * `{ retention }` keeps the last `retention`; `false` turns it off (a write is then one row written, as
   * `agents/context`'s). On, a changed write writes one row (the block's own row also holds its newest
   * versions), and every 16 versions one more (they move to a batch row), reading a constant number of rows
   * whatever the number of versions kept.
   */
  versions?: boolean | { retention?: number } | undefined;
}

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
  protected static override readonly storeName: string = OWNER;

  constructor(source: SqlSource, labelOrOptions?: string | SqliteContextProviderOptions) {
    // A label alone (agents/context's form, one provider per block) builds no options object: errors name
    // the class by `storeName`.
    if (typeof labelOrOptions === "string" || labelOrOptions === undefined) {
      super(sqliteClient(source, undefined, OWNER), labelOrOptions);
      return;
    }
    const options = blockStoreOptions(labelOrOptions, OWNER);
    const { label, namespace, versions } = options;
    super(sqliteClient(source, options.onStatement, OWNER), { label, namespace, versions, owner: OWNER });
  }
}
