import { ContextError } from "@contextblocks/core";
import { type PgPoolLike, type SqlClient, type StatementObserver, toSqlClient } from "@contextblocks/sql";
import type { PgClientLike, PostgresJsSql } from "@contextblocks/sql/store-kit";
import { namingIndexLimits } from "./index-row-limit.js";

/**
 * What the Postgres providers accept: a node-postgres `Client` or `Pool`, a `postgres` (porsager) `sql`
 * instance, or a Postgres `SqlClient`.
 */
export type PostgresSource = PgClientLike | PgPoolLike | PostgresJsSql | SqlClient;

/**
 * The source as a `SqlClient`, refusing anything that is not Postgres with an error naming the provider; a write
 * with a value too long for an index is refused naming that (`namingIndexLimits`).
 */
export function postgresClient(
  source: PostgresSource,
  onStatement: StatementObserver | undefined,
  provider: string,
): SqlClient {
  let client: SqlClient;
  try {
    client = toSqlClient(source as Parameters<typeof toSqlClient>[0], { onStatement });
  } catch (error) {
    throw new ContextError(
      "INVALID_CONFIG",
      `${provider} needs a node-postgres Client or Pool, a postgres (porsager) sql instance, or a Postgres SqlClient: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (client.dialect !== "postgres") {
    throw new ContextError(
      "INVALID_CONFIG",
      `${provider} needs a Postgres database; this client's dialect is "${client.dialect}"`,
    );
  }
  return namingIndexLimits(client);
}
