import { MessageTree } from "@contextblocks/sessions";
import type { SqlSource } from "@contextblocks/sql";
import { SqliteSessionStore, type SqliteSessionStoreOptions } from "./sqlite-session-store.js";

/**
 * The name and methods of agents@0.22.0's `AgentSessionProvider` (`agents/experimental/memory/session`):
 * `appendMessage`, `getHistory`, `getLatestLeaf`, `getBranches`, `addCompaction`, … on a `SqliteSessionStore`,
 * read through the message tree as a `Session` reads it. `new AgentSessionProvider(this, "chat")` in an Agent.
 */
export class AgentSessionProvider extends MessageTree {
  declare readonly storage: SqliteSessionStore;

  constructor(source: SqlSource, sessionIdOrOptions?: string | SqliteSessionStoreOptions) {
    super(new SqliteSessionStore(source, sessionIdOrOptions));
  }
}
