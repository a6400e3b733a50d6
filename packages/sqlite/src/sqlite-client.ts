import { ContextError } from "@contextblocks/core";
import type { SqlClient, SqlSource, StatementObserver } from "@contextblocks/sql";
import { toSqliteClient } from "@contextblocks/sql/store-kit";

/** The source as a `SqlClient`, refusing a client of another dialect with an error naming `owner`. */
export function sqliteClient(
  source: SqlSource,
  onStatement: StatementObserver | undefined,
  owner: string,
): SqlClient {
  let client: SqlClient;
  try {
    client = onStatement === undefined ? toSqliteClient(source) : toSqliteClient(source, { onStatement });
  } catch (error) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner}: expected a database (a Durable Object's ctx.storage or ctx, an agents Agent, a better-sqlite3 Database or a SqlClient): ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (client.dialect !== "sqlite") {
    throw new ContextError(
      "INVALID_CONFIG",
      `${owner} needs a SQLite database; this client's dialect is "${client.dialect}"`,
    );
  }
  return client;
}

/**
 * Clients of sources given without options, already checked for their dialect, by source. A wake constructs
 * a store per block on one source: each finds its client in one look-up, a short path that callers (a Durable
 * Object's constructor) can inline without the adapter's branches.
 */
const checkedClients = new WeakMap<object, SqlClient>();

/** `sqliteClient(source, undefined, owner)`, remembered per source (the same shared client `toSqliteClient` gives). */
export function sqliteClientOf(source: SqlSource, owner: string): SqlClient {
  const known = checkedClients.get(source as object);
  if (known !== undefined) return known;
  const client = sqliteClient(source, undefined, owner);
  checkedClients.set(source as object, client);
  return client;
}
