import { MessageTree } from "@contextblocks/sessions/store-kit";
import { PostgresSessionStore, type PostgresSource } from "../src/index.js";
import type { PostgresSessionStoreOptions } from "../src/store-kit.js";

/** The message tree over a store that searches: its `searchMessages` is always there. */
export type SearchableTree = MessageTree & Required<Pick<MessageTree, "searchMessages">>;

/** A session's messages as a `Session` reads them: the message tree over a `PostgresSessionStore`. */
export function postgresTree(
  source: PostgresSource,
  sessionIdOrOptions?: string | PostgresSessionStoreOptions,
): SearchableTree {
  return new MessageTree(new PostgresSessionStore(source, sessionIdOrOptions)) as SearchableTree;
}
