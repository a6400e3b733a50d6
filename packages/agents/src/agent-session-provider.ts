import type { SqlSource } from "@contextblocks/sql";
import { SqliteSessionStore } from "@contextblocks/sqlite";
import type { SqliteSessionStoreOptions } from "@contextblocks/sqlite/store-kit";
import { AgentsMessageTree } from "./agents-message-tree.js";

/**
 * agents@0.22.0's `AgentSessionProvider` (`agents/experimental/memory/session`): `appendMessage`,
 * `getHistory`, `getLatestLeaf`, `getBranches`, `addCompaction`, … on a `SqliteSessionStore`, read through
 * the message tree as a `Session` reads it. `new AgentSessionProvider(this, "chat")` in an Agent. A database
 * it creates gets the lean layout, which agents@0.22.0
 * reads and writes too (its `getLatestLeaf` orders by `rowid`, which the keyed layout a Durable Object gets
 * by default has not). An agent moved to this entry can be moved back, and the two can share a database.
 * `newDatabaseLayout: "keyed"` asks for the cheaper writes instead. As agents', a read given leaf id `""` reads the
 * latest leaf.
 */
export class AgentSessionProvider extends AgentsMessageTree {
  declare readonly storage: SqliteSessionStore;

  constructor(source: SqlSource, sessionIdOrOptions?: string | SqliteSessionStoreOptions) {
    super(new SqliteSessionStore(source, withAgentsLayout(sessionIdOrOptions)));
  }
}

/** The options with the lean layout for a new database unless one was asked for; anything else as given. */
export function withAgentsLayout(
  sessionIdOrOptions: string | SqliteSessionStoreOptions | undefined,
): string | SqliteSessionStoreOptions | undefined {
  if (sessionIdOrOptions === undefined) return { newDatabaseLayout: "lean" };
  if (typeof sessionIdOrOptions === "string")
    return { sessionId: sessionIdOrOptions, newDatabaseLayout: "lean" };
  // Not an object: the store refuses it with its own message.
  if (typeof sessionIdOrOptions !== "object" || sessionIdOrOptions === null) return sessionIdOrOptions;
  return { newDatabaseLayout: "lean", ...sessionIdOrOptions };
}
