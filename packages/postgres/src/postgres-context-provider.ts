import type { StatementObserver } from "@contextblocks/sql";
import { blockStoreOptions, SqlContextProvider } from "@contextblocks/sql-stores";
import { type PostgresSource, postgresClient } from "./client.js";

const OWNER = "PostgresContextProvider";

/** Options of `PostgresContextProvider` (the object form of its second argument). */
export interface PostgresContextProviderOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /** Keeps this provider's rows apart from every other namespace's and from plain rows (as in sqlite). */
  namespace?: string | undefined;
  /** Create the table on first write when it is missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /**
   * Keep versions for `ContextBlocks.blockVersions` / `restoreBlock`: `true` (the last 50) or `{ retention }`.
   * On by default (the last 50); `false` turns it off. Versions go to `contextblocks_block_history` in the
   * write's statement (one data-modifying CTE), and the newest version number is kept on the block's row
   * (`history_version`), so a write reads and writes a constant number of rows. With `createTables: false`,
   * run `schema.sql` (it creates both, and adds the column to an older table).
   */
  versions?: boolean | { retention?: number } | undefined;
}

/**
 * A writable context block stored as one row of `cf_agents_context_blocks` in Postgres (the table Cloudflare
 * agents' Sessions API uses on Postgres): also the store of the frozen prompt (`new ContextBlocks(configs,
 * new PostgresContextProvider(client, "_prompt"))`). `SqlContextProvider` of `@contextblocks/sql-stores` on a
 * Postgres client: rows keyed as on SQLite, the label, or with a namespace `U+001F +
 * JSON.stringify([namespace, label])`.
 *
 * `get` is one statement; `set` is one upsert that writes nothing when the content is unchanged, safe for
 * concurrent writers on several connections. The first write creates the blocks table (only it).
 *
 * ```ts
 * const client = new pg.Client({ connectionString: env.HYPERDRIVE.connectionString });
 * await client.connect();
 * new PostgresContextProvider(client, `memory_${sessionId}`);
 * new PostgresContextProvider(client, { label: "memory", namespace: "tenant-a" });
 * ```
 */
export class PostgresContextProvider extends SqlContextProvider {
  protected static override readonly storeName: string = OWNER;

  constructor(source: PostgresSource, labelOrOptions?: string | PostgresContextProviderOptions) {
    const options = blockStoreOptions(labelOrOptions, OWNER);
    const { label, namespace, createTables, versions } = options;
    super(postgresClient(source, options.onStatement, OWNER), {
      label,
      namespace,
      createTables,
      versions,
      owner: OWNER,
    });
  }
}
