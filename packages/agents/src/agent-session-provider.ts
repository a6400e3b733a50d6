import type { SqlSource } from "@contextblocks/sql";
import {
  AgentSessionProvider as SqliteAgentSessionProvider,
  type SqliteSessionStoreOptions,
} from "@contextblocks/sqlite";

/**
 * agents' `AgentSessionProvider`: `@contextblocks/sqlite`'s (a `SqliteSessionStore` read through the message
 * tree, with agents' methods), except that a database it creates gets the lean layout, which agents@0.22.0
 * reads and writes too (its `getLatestLeaf` orders by `rowid`, which the keyed layout a Durable Object gets
 * by default has not). An agent moved to this entry can be moved back, and the two can share a database.
 * `newDatabaseLayout: "keyed"` asks for the cheaper writes instead.
 */
export class AgentSessionProvider extends SqliteAgentSessionProvider {
  constructor(source: SqlSource, sessionIdOrOptions?: string | SqliteSessionStoreOptions) {
    super(source, withAgentsLayout(sessionIdOrOptions));
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
