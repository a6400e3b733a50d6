import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { isMissingTableError, raw } from "@contextblocks/sql/store-kit";
import { searchableText } from "@contextblocks/text";
import { keyHandle } from "./handle.js";
import { legacyKeysSchema, legacyKeysTable, legacyTable, scopesTable, writesView } from "./schema.js";

/**
 * Copying entries that `agents/context`'s `AgentSearchProvider` wrote into this provider's schema.
 *
 * That provider keeps every label's entries in `cf_agents_search_fts (label UNINDEXED, key UNINDEXED,
 * content)`. The first time this provider opens a label (without a namespace) in a database, it copies that
 * label's rows (a copied row never overwrites an entry this provider already holds), records their keys in
 * `contextblocks_search_legacy_keys`, and marks the scope as imported, all in one batch: atomic on Durable
 * Objects and better-sqlite3. The old rows are never deleted: going back to `agents/context` finds its index
 * as it was (without what was written here since). Dropping the old table, once no block uses the old
 * provider, is the user's decision: `DROP TABLE cf_agents_search_fts;` (docs/migration-from-agents-context.md).
 *
 * Keys: `agents/context` keys an entry by the slug of its title (`C++ tips` → `c-tips`); `set_context` here
 * writes a title that is not plain words as slug, `--`, hash (`c-tips--…`). So that the model's next write of
 * "C++ tips" replaces the copied entry instead of adding a second one, a write or delete of a key of that form
 * whose slug is a copied key goes to the copied key (`storedKey`).
 */
export async function importLegacyEntries(client: SqlClient, scope: number, label: string): Promise<number> {
  const finished = sql`UPDATE ${raw(scopesTable)} SET legacy_imported = 1 WHERE id = ${scope}`;
  const found = await client.query<{ found: number }>`
    SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ${legacyTable}`;
  if (found.length === 0) {
    await client.run(finished);
    return 0;
  }
  // Newest first: if the old table holds a key twice (its delete-then-insert is not atomic), the later row wins.
  const rows = await client.query<{ key: unknown; content: unknown }>`
    SELECT key, content FROM cf_agents_search_fts WHERE label = ${label} ORDER BY rowid DESC`;
  const statements: SqlStatement[] = [raw(legacyKeysSchema)];
  for (const row of rows) {
    const key = textOf(row.key);
    statements.push(
      sql`INSERT INTO ${raw(writesView)} (operation, scope, handle, key, content)
        VALUES ('import', ${scope}, ${keyHandle(scope, key)}, ${key}, ${searchableText(textOf(row.content))})`,
      sql`INSERT OR IGNORE INTO ${raw(legacyKeysTable)} (scope, key) VALUES (${scope}, ${key})`,
    );
  }
  statements.push(finished);
  await client.batch(statements);
  return rows.length;
}

/** A key `set_context` makes of a title that is not plain words: its slug, `--`, a base-36 hash. */
const hashedTitleKey = /^([a-z0-9]+(?:-[a-z0-9]+)*)--[0-9a-z]+$/;

/**
 * The key a write or delete of `key` goes to: the copied `agents/context` key when `key` is a hashed title key
 * whose slug is one (one indexed row read, only for keys of that form), else `key` itself.
 */
export async function storedKey(client: SqlClient, scope: number, key: string): Promise<string> {
  const slug = hashedTitleKey.exec(key)?.[1];
  if (slug === undefined) return key;
  try {
    const rows = await client.run(
      sql`SELECT 1 AS found FROM ${raw(legacyKeysTable)} WHERE scope = ${scope} AND key = ${slug}`,
    );
    return rows.length > 0 ? slug : key;
  } catch (error) {
    // No table: nothing was ever copied into this database.
    if (isMissingTableError(error, legacyKeysTable)) return key;
    throw error;
  }
}

/** The old table stores whatever was bound; entries here are text. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return String(value);
}
