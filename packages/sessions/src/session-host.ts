import { ContextError } from "@contextblocks/core";
import {
  isBetterSqlite3Database,
  isDurableObjectState,
  isDurableObjectStorage,
  isSqlClient,
  isTaggedTemplateSource,
  type SqlClient,
  type SqlSource,
  toSqlClient,
} from "@contextblocks/sql";
import { isSessionProvider, type SessionProvider } from "./session-provider.js";
import { SqliteSessionProvider } from "./sqlite-session-provider.js";

/** What `Session.create` and `SessionManager.create` accept. */
export type SessionHost = SqlSource | SessionProvider;

/** A host resolved: the message storage, and the database for default blocks when there is one. */
export interface ResolvedHost {
  provider: SessionProvider;
  client: SqlClient | null;
  sessionId: string;
}

/**
 * Picks storage by shape. A `SessionProvider` is used as is (a `SqliteSessionProvider` also lends its
 * database to blocks declared without a provider); anything `toSqlClient` accepts gets a
 * `SqliteSessionProvider` for `sessionId`. A SQL host is tested first: an `agents` Agent has a `sql`
 * method and is never a session provider.
 */
export function resolveHost(host: SessionHost, sessionId: string): ResolvedHost {
  if (isSqlHost(host)) {
    const client = toSqlClient(host);
    return { provider: new SqliteSessionProvider(client, sessionId), client, sessionId };
  }
  if (isSessionProvider(host)) {
    if (host instanceof SqliteSessionProvider) {
      return { provider: host, client: host.client, sessionId: host.sessionId };
    }
    return { provider: host, client: null, sessionId };
  }
  throw new ContextError(
    "INVALID_CONFIG",
    "Session.create: expected a SessionProvider, a SqlClient, a Durable Object's ctx.storage or ctx, an object with a tagged-template sql method, or a better-sqlite3 Database",
  );
}

export function isSqlHost(host: unknown): host is SqlSource {
  return (
    isSqlClient(host) ||
    isDurableObjectStorage(host) ||
    isDurableObjectState(host) ||
    isBetterSqlite3Database(host) ||
    isTaggedTemplateSource(host)
  );
}
