import { ContextError } from "@contextblocks/core";
import type { SqlClient, SqlSource, StatementObserver } from "@contextblocks/sql";
import { toSqliteClient } from "@contextblocks/sql/store-kit";

/**
 * Clients of sources given without a statement observer, checked for their dialect, by source: a wake
 * constructs a store per block on one source, and each then finds its client in one look-up.
 */
const checkedClients = new WeakMap<object, SqlClient>();

/** The source as a `SqlClient`, refusing a client of another dialect with an error naming `owner`. */
export function sqliteClient(
  source: SqlSource,
  onStatement: StatementObserver | undefined,
  owner: string,
): SqlClient {
  if (onStatement === undefined) {
    const known = checkedClients.get(source as object);
    if (known !== undefined) return known;
  }
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
  if (onStatement === undefined) checkedClients.set(source as object, client);
  return client;
}
