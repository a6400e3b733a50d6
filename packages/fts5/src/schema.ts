import type { SqlStatement } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";

/**
 * The storage layout. Three objects carry data:
 *
 * - `contextblocks_search_index`: one FTS5 table, the only copy of every entry (like `agents/context`, no
 *   mirror table doubling the billed writes). Columns: `scope` (the label's scope id, one token), `handle`
 *   (one token that identifies the key within its scope: a 53-bit hash of scope id and key, in decimal),
 *   `key` (the key as given, also searchable), `content`, and `context` (text a reader would find the entry
 *   by that is not part of it, such as a document chunk's title and section: searched at a lower weight,
 *   never returned; NULL when none was given). `tokenize='porter unicode61'`. Searches rank by bm25 with
 *   weights 0 for scope and handle, 2 for key, 1 for content and 0.3 for context.
 * - `contextblocks_search_scopes`: one row per (namespace, label): its id and its entry count, kept exact by
 *   the write triggers, so `get()` reads one row instead of counting the index.
 * - `contextblocks_search_terms`: an `fts5vocab` view of the index, for the document frequency of query terms.
 *
 * Writes go through the view `contextblocks_search_writes`: inserting `('set' | 'delete' | 'import', scope,
 * handle, key, content, context)` fires one trigger that finds the entry by its handle (an index look-up, not
 * a scan), keeps the count, and replaces or removes the row. One statement per write makes every write atomic
 * on every backend, including adapters whose `batch` is not.
 *
 * The view `contextblocks_search_layout` holds the layout's version and is created last: the provider reads
 * it with the scope row, so a database without it (new, or of an earlier layout) is set up or upgraded on
 * first use (layout.ts).
 */

export const indexTable = "contextblocks_search_index";
/** FTS5's shadow table of index records; row 1 holds the number of entries (scope-share.ts). */
export const indexDataTable = "contextblocks_search_index_data";
export const scopesTable = "contextblocks_search_scopes";
export const termsTable = "contextblocks_search_terms";
export const writesView = "contextblocks_search_writes";
export const layoutView = "contextblocks_search_layout";
/** The version `layoutView` holds for the layout these statements create (1: no `context` column, no view). */
export const layoutVersion = 2;
/** Where an upgrade copies the entries before the index of the earlier layout is dropped (layout.ts). */
export const indexCopyTable = "contextblocks_search_index_copy";

/** The table `agents/context`'s `AgentSearchProvider` writes; read once per label by the migration. */
export const legacyTable = "cf_agents_search_fts";
/** The keys copied from `legacyTable`, per scope (migrate.ts); created by the first copy. */
export const legacyKeysTable = "contextblocks_search_legacy_keys";
export const legacyKeysSchema = `CREATE TABLE IF NOT EXISTS ${legacyKeysTable} (
  scope INTEGER NOT NULL,
  key TEXT NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID`;

/**
 * The ranking of a search, passed with each query (`rank MATCH ...`): bm25 with column weights in column
 * order scope, handle, key, content, context. Keys weigh twice as much as content when they are searched; an
 * entry's context weighs 0.3, as the neighbouring turns of a message do in the session search. The handle is
 * matched only when the query is exactly a key (search.ts), and that entry then ranks first.
 */
export function rankFunction(searchKeys: boolean): string {
  return `bm25(${bm25Weights(searchKeys)})`;
}

/** The column weights of `rankFunction`, as the arguments after the table of a `bm25()` call. */
export function bm25Weights(searchKeys: boolean): string {
  return searchKeys ? "0.0, 1000.0, 2.0, 1.0, 0.3" : "0.0, 1000.0, 0.0, 1.0, 0.3";
}

/** The FTS5 table of this layout, under `name` (the index, or the copy an upgrade fills first). */
export function indexSchema(name: string): SqlStatement {
  return raw(`CREATE VIRTUAL TABLE IF NOT EXISTS ${name}
      USING fts5(scope, handle, key, content, context, tokenize = 'porter unicode61')`);
}

/**
 * The scope id as stored in the index: an integer, so its one token is its digits. (A Durable Object binds
 * every JavaScript number as REAL, which FTS5 would index as "1.0", two tokens.)
 */
const scopeToken = "CAST(new.scope AS INTEGER)";

/** The entry an existing `(scope, key)` has in the index: a look-up by its handle token, then exact columns. */
const sameEntry = `SELECT rowid FROM ${indexTable}
      WHERE ${indexTable} MATCH ('handle : ' || new.handle) AND scope = new.scope AND key = new.key`;

/**
 * Statements that create the schema, in order. The layout view comes last: the provider takes its existence
 * as proof that everything before it exists (on adapters without atomic batches a half-created schema is
 * completed on the next attempt, since every statement is `IF NOT EXISTS`).
 */
export function schemaStatements(): SqlStatement[] {
  return [
    indexSchema(indexTable),
    raw(`CREATE VIRTUAL TABLE IF NOT EXISTS ${termsTable} USING fts5vocab(${indexTable}, col)`),
    raw(`CREATE VIEW IF NOT EXISTS ${writesView} (operation, scope, handle, key, content, context) AS
      SELECT NULL, NULL, NULL, NULL, NULL, NULL WHERE 0`),
    raw(`CREATE TRIGGER IF NOT EXISTS contextblocks_search_set
      INSTEAD OF INSERT ON ${writesView} WHEN new.operation = 'set'
      BEGIN
        UPDATE ${scopesTable} SET entries = entries + 1
          WHERE id = new.scope AND NOT EXISTS (${sameEntry});
        DELETE FROM ${indexTable}
          WHERE rowid IN (${sameEntry} AND (content IS NOT new.content OR context IS NOT new.context));
        INSERT INTO ${indexTable} (scope, handle, key, content, context)
          SELECT ${scopeToken}, new.handle, new.key, new.content, new.context WHERE NOT EXISTS (${sameEntry});
      END`),
    raw(`CREATE TRIGGER IF NOT EXISTS contextblocks_search_import
      INSTEAD OF INSERT ON ${writesView} WHEN new.operation = 'import'
      BEGIN
        UPDATE ${scopesTable} SET entries = entries + 1
          WHERE id = new.scope AND NOT EXISTS (${sameEntry});
        INSERT INTO ${indexTable} (scope, handle, key, content)
          SELECT ${scopeToken}, new.handle, new.key, new.content WHERE NOT EXISTS (${sameEntry});
      END`),
    raw(`CREATE TRIGGER IF NOT EXISTS contextblocks_search_delete
      INSTEAD OF INSERT ON ${writesView} WHEN new.operation = 'delete'
      BEGIN
        UPDATE ${scopesTable} SET entries = entries - 1
          WHERE id = new.scope AND EXISTS (${sameEntry});
        DELETE FROM ${indexTable} WHERE rowid IN (${sameEntry});
      END`),
    raw(`CREATE TABLE IF NOT EXISTS ${scopesTable} (
      id INTEGER PRIMARY KEY,
      namespace TEXT NOT NULL,
      label TEXT NOT NULL,
      entries INTEGER NOT NULL DEFAULT 0,
      legacy_imported INTEGER NOT NULL DEFAULT 0,
      UNIQUE (namespace, label)
    )`),
    raw(`CREATE VIEW IF NOT EXISTS ${layoutView} (version) AS SELECT ${layoutVersion}`),
  ];
}
