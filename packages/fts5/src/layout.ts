import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { indexCopyTable, indexSchema, indexTable, schemaStatements, writesView } from "./schema.js";

/**
 * Sets up the storage layout (schema.ts) in a database that does not have it yet: a new database, or one
 * written by an earlier version of this provider, whose index has no `context` column.
 *
 * FTS5 tables cannot be altered, and the index is the only copy of every entry, so an index of the earlier
 * layout is copied over (`contextblocks_search_index_copy`, every row with its rowid, scope, handle, key and
 * content as stored), then dropped, and the copy takes its name. The scopes table, the entry counts and the
 * keys copied from `agents/context` stay as they are. Everything runs as one batch: all-or-nothing on
 * better-sqlite3, a Durable Object's storage and an Agent, so a failure leaves the earlier layout and its
 * data untouched and the next use starts over. On a source whose `batch` is not atomic (a tagged-template
 * `sql` without `ctx.storage`), the statements run in an order that never drops the earlier index before its
 * copy is complete, and the next use reads where the last one stopped and finishes it.
 */
export async function openLayout(client: SqlClient): Promise<void> {
  const tables = new Set(
    (
      await client.query<{ name: string }>`SELECT name FROM sqlite_master
        WHERE type = 'table' AND name IN (${indexTable}, ${indexCopyTable})`
    ).map((row) => row.name),
  );
  const statements: SqlStatement[] = [];
  if (tables.has(indexTable) && !(await hasContextColumn(client))) {
    // An index of the earlier layout: copy it, then swap.
    statements.push(
      indexSchema(indexCopyTable),
      // What an interrupted copy (non-atomic batch) left behind.
      raw(`DELETE FROM ${indexCopyTable}`),
      raw(`INSERT INTO ${indexCopyTable} (rowid, scope, handle, key, content)
        SELECT rowid, scope, handle, key, content FROM ${indexTable}`),
      ...swapStatements(),
    );
  } else if (!tables.has(indexTable) && tables.has(indexCopyTable)) {
    // Interrupted after the earlier index was dropped: the copy is complete.
    statements.push(...swapStatements());
  }
  statements.push(...schemaStatements());
  await client.batch(statements);
}

/**
 * The copy takes the index's name. The writes view goes first: its triggers name the index, and
 * `ALTER TABLE … RENAME` refuses to run while a trigger names a table that does not exist.
 * `schemaStatements` then creates the view and its triggers for this layout.
 */
function swapStatements(): SqlStatement[] {
  return [
    raw(`DROP VIEW IF EXISTS ${writesView}`),
    raw(`DROP TABLE IF EXISTS ${indexTable}`),
    raw(`ALTER TABLE ${indexCopyTable} RENAME TO ${indexTable}`),
  ];
}

async function hasContextColumn(client: SqlClient): Promise<boolean> {
  const rows = await client.run(
    sql`SELECT 1 AS found FROM pragma_table_info(${indexTable}) WHERE name = 'context'`,
  );
  return rows.length > 0;
}
