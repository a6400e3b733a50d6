import type { SqlSource } from "@contextblocks/sql";
import {
  type BlockStoreOptions,
  blockStoreOptions,
  SqlSkillProvider,
  type SqlSkillProviderOptions,
} from "@contextblocks/sql-stores";
import { sqliteClient } from "./sqlite-client.js";

const OWNER = "SqliteSkillProvider";

/**
 * Options of `SqliteSkillProvider` (the object form of its second argument): label, namespace, onStatement,
 * and `versions` (entry versions, off by default: `true` keeps the last 50 of each skill).
 */
export type SqliteSkillProviderOptions = BlockStoreOptions & Pick<SqlSkillProviderOptions, "versions">;

/**
 * A loadable block (skills) in any SQLite database: a Durable Object's `ctx.storage`, an object with a
 * tagged-template `sql` (an `agents` Agent), a better-sqlite3 `Database`, or a `SqlClient`. One row per
 * skill in `contextblocks_skills`, indexed by (block, key): `SqlSkillProvider` of `@contextblocks/sql-stores`
 * on a SQLite client.
 *
 * - `get()` lists `- key: description` (or `- key`) in key order: it reads every skill's key and
 *   description (one row each, necessarily), never a skill's content.
 * - `load(key)`, `set(key, content, description?)` and `delete(key)` touch one row whatever the number of
 *   skills. `set` without a description keeps the stored one; an empty description lists the key alone.
 *
 * ```ts
 * new SqliteSkillProvider(ctx.storage, { namespace: "tenant-a" }); // label filled in by the block
 * ```
 */
export class SqliteSkillProvider extends SqlSkillProvider {
  constructor(source: SqlSource, labelOrOptions?: string | SqliteSkillProviderOptions) {
    const options = blockStoreOptions(labelOrOptions, OWNER);
    const { label, namespace, versions } = options;
    super(sqliteClient(source, options.onStatement, OWNER), { label, namespace, versions, owner: OWNER });
  }
}
