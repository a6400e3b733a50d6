import type Database from "better-sqlite3";
import { keyHandle } from "../../src/handle.js";
import {
  earlierSchema,
  earlierScopeInsert,
  earlierScopeSelect,
  earlierSet,
} from "./earlier-layout-schema.js";

/** Creates the earlier layout in `database`. */
export function createEarlierLayout(database: Database.Database): void {
  for (const statement of earlierSchema) database.exec(statement);
}

/** Writes one entry as the earlier version did (its scope row is made on first use of the label). */
export function writeEarlierEntry(
  database: Database.Database,
  scope: { namespace: string; label: string },
  key: string,
  content: string,
): void {
  database.prepare(earlierScopeInsert).run(scope.namespace, scope.label);
  const { id } = database.prepare(earlierScopeSelect).get(scope.namespace, scope.label) as { id: number };
  database.prepare(earlierSet).run(id, keyHandle(id, key), key, content);
}

/** Every stored row of the index, with its rowid, in rowid order: what an upgrade must keep. */
export function indexRows(database: Database.Database): unknown[] {
  return database
    .prepare("SELECT rowid, scope, handle, key, content FROM contextblocks_search_index ORDER BY rowid")
    .all();
}
