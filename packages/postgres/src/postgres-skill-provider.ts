import type { StatementObserver } from "@contextblocks/sql";
import { blockStoreOptions, SqlSkillProvider } from "@contextblocks/sql-stores";
import { type PostgresSource, postgresClient } from "./client.js";

const OWNER = "PostgresSkillProvider";

/** Options of `PostgresSkillProvider` (the object form of its second argument). */
export interface PostgresSkillProviderOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /** Keeps this provider's skills apart from every other namespace's. */
  namespace?: string | undefined;
  /** Create the table on first write when it is missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /**
   * Entry versions (`versions({ key })`), off by default: `true` keeps the last 50 versions of each skill in
   * `contextblocks_skill_history`, `{ retention }` the last `retention`.
   */
  versions?: boolean | { retention?: number } | undefined;
}

/**
 * A loadable block (skills) in Postgres: one row per skill in `contextblocks_skills`, keyed by (block, key),
 * as `SqliteSkillProvider` keeps them on SQLite (`SqlSkillProvider` of `@contextblocks/sql-stores` on a
 * Postgres client). `get()` lists `- key: description` in key order without reading any content; `load`,
 * `set` and `delete` touch one row. The first write creates the skills table (only it).
 *
 * ```ts
 * new PostgresSkillProvider(pool, { namespace: "tenant-a" }); // label filled in by the block
 * ```
 */
export class PostgresSkillProvider extends SqlSkillProvider {
  constructor(source: PostgresSource, labelOrOptions?: string | PostgresSkillProviderOptions) {
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
