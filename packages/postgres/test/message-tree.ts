import { MessageTree } from "@contextblocks/sessions";
import { PostgresSessionStore, type PostgresSessionStoreOptions, type PostgresSource } from "../src/index.js";

/** The message tree over a store that searches: its `searchMessages` is always there. */
export type SearchableTree = MessageTree & Required<Pick<MessageTree, "searchMessages">>;

/** A session's messages as a `Session` reads them: the message tree over a `PostgresSessionStore`. */
export function postgresTree(
  source: PostgresSource,
  sessionIdOrOptions?: string | PostgresSessionStoreOptions,
): SearchableTree {
  return new MessageTree(new PostgresSessionStore(source, sessionIdOrOptions)) as SearchableTree;
}
