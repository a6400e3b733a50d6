import { raw, type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { keyHandle } from "./handle.js";
import { legacyTable, scopesTable, writesView } from "./schema.js";

/**
 * Moving entries that `agents/context`'s `AgentSearchProvider` wrote into this provider's schema.
 *
 * That provider keeps every label's entries in `cf_agents_search_fts (label UNINDEXED, key UNINDEXED,
 * content)`. The first time this provider opens a label (without a namespace) in a database, it reads that
 * label's rows, imports them (an imported row never overwrites an entry this provider already holds), and
 * deletes them from the old table, all in one batch: atomic on Durable Objects and better-sqlite3. The scope
 * row then records that the import is done, so later opens cost nothing. Re-running after a failure is safe:
 * the import is idempotent and the old rows are deleted only with the flag.
 *
 * The old table itself is left in place (possibly empty): another block may still be served by the old
 * provider, which recreates it on its own anyway.
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
  const statements: SqlStatement[] = rows.map((row) => {
    const key = textOf(row.key);
    return sql`INSERT INTO ${raw(writesView)} (operation, scope, handle, key, content)
      VALUES ('import', ${scope}, ${keyHandle(scope, key)}, ${key}, ${textOf(row.content)})`;
  });
  statements.push(sql`DELETE FROM cf_agents_search_fts WHERE label = ${label}`, finished);
  await client.batch(statements);
  return rows.length;
}

/** The old table stores whatever was bound; entries here are text. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return String(value);
}
