import { MessageTree } from "@contextblocks/sessions/store-kit";
import type { SqlSource } from "@contextblocks/sql";
import { SqliteSessionStore } from "../src/index.js";
import type { SqliteSessionStoreOptions } from "../src/store-kit.js";

/** The message tree over a SQLite store: it searches and reads whole paths (the store has both). */
export type SqliteTree = MessageTree & Required<Pick<MessageTree, "searchMessages" | "getPathMessages">>;

/** A `SqliteSessionStore` read through the message tree, as a `Session` reads it: what these tests drive. */
export function sqliteTree(source: SqlSource, options?: string | SqliteSessionStoreOptions): SqliteTree {
  return new MessageTree(new SqliteSessionStore(source, options)) as SqliteTree;
}
