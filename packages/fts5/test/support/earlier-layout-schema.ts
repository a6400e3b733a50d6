/**
 * A database as the provider's earlier layout (before per-entry context) left it: the same statements that
 * version ran, an index of four columns (scope, handle, key, content) and no layout view.
 */
const sameEntry = `SELECT rowid FROM contextblocks_search_index
      WHERE contextblocks_search_index MATCH ('handle : ' || new.handle) AND scope = new.scope AND key = new.key`;

export const earlierSchema = [
  `CREATE VIRTUAL TABLE IF NOT EXISTS contextblocks_search_index
      USING fts5(scope, handle, key, content, tokenize = 'porter unicode61')`,
  "CREATE VIRTUAL TABLE IF NOT EXISTS contextblocks_search_terms USING fts5vocab(contextblocks_search_index, col)",
  `CREATE VIEW IF NOT EXISTS contextblocks_search_writes (operation, scope, handle, key, content) AS
      SELECT NULL, NULL, NULL, NULL, NULL WHERE 0`,
  `CREATE TRIGGER IF NOT EXISTS contextblocks_search_set
      INSTEAD OF INSERT ON contextblocks_search_writes WHEN new.operation = 'set'
      BEGIN
        UPDATE contextblocks_search_scopes SET entries = entries + 1
          WHERE id = new.scope AND NOT EXISTS (${sameEntry});
        DELETE FROM contextblocks_search_index
          WHERE rowid IN (${sameEntry} AND content IS NOT new.content);
        INSERT INTO contextblocks_search_index (scope, handle, key, content)
          SELECT CAST(new.scope AS INTEGER), new.handle, new.key, new.content WHERE NOT EXISTS (${sameEntry});
      END`,
  `CREATE TRIGGER IF NOT EXISTS contextblocks_search_delete
      INSTEAD OF INSERT ON contextblocks_search_writes WHEN new.operation = 'delete'
      BEGIN
        UPDATE contextblocks_search_scopes SET entries = entries - 1
          WHERE id = new.scope AND EXISTS (${sameEntry});
        DELETE FROM contextblocks_search_index WHERE rowid IN (${sameEntry});
      END`,
  `CREATE TABLE IF NOT EXISTS contextblocks_search_scopes (
      id INTEGER PRIMARY KEY,
      namespace TEXT NOT NULL,
      label TEXT NOT NULL,
      entries INTEGER NOT NULL DEFAULT 0,
      legacy_imported INTEGER NOT NULL DEFAULT 0,
      UNIQUE (namespace, label)
    )`,
];

/** The statements the earlier version ran to add a scope row, find its id, and write an entry. */
export const earlierScopeInsert = `INSERT INTO contextblocks_search_scopes (namespace, label, legacy_imported)
  VALUES (?, ?, 1) ON CONFLICT (namespace, label) DO NOTHING`;
export const earlierScopeSelect =
  "SELECT id FROM contextblocks_search_scopes WHERE namespace = ? AND label = ?";
export const earlierSet = `INSERT INTO contextblocks_search_writes (operation, scope, handle, key, content)
  VALUES ('set', ?, ?, ?, ?)`;
