import { ContextError, describeValue } from "@contextblocks/core";
import {
  PostgresContextProvider as BasePostgresContextProvider,
  PostgresSearchProvider as BasePostgresSearchProvider,
  PostgresSessionStore,
  type PostgresSource,
} from "@contextblocks/postgres";

/** agents' minimal Postgres connection: `execute(query, args)` resolving `{ rows }`. */
export interface PostgresConnection {
  execute(
    query: string,
    args?: (string | number | boolean | null)[],
  ): Promise<{ rows: Record<string, unknown>[] }>;
}

/** agents' structural `pg.Client`. */
export interface PgClientLike {
  query(queryText: string, values?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** What agents' Postgres providers accept: a `pg.Client` (Hyperdrive) or a `PostgresConnection`. */
export type PostgresClient = PostgresConnection | PgClientLike | PostgresSource;

/** An agents `PostgresConnection` becomes the `pg.Client` shape contextblocks' Postgres classes take. */
function sourceOf(client: PostgresClient, name: string): PostgresSource {
  if (typeof client === "object" && client !== null && !("query" in client) && "execute" in client) {
    const connection = client as PostgresConnection;
    return {
      query: async (text: string, values?: unknown[]) => {
        const result = await connection.execute(text, values as (string | number | boolean | null)[]);
        return { rows: result.rows, rowCount: result.rows.length };
      },
    } as PostgresSource;
  }
  if (typeof client !== "object" || client === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `new ${name}: expected a pg.Client, a pg.Pool or a PostgresConnection, got ${describeValue(client)}`,
    );
  }
  return client as PostgresSource;
}

/**
 * agents' `PostgresSessionProvider(client, sessionId)`: contextblocks' `PostgresSessionStore` (its own tables;
 * create them once with `createTables`). A Postgres database agents wrote is not read.
 */
export class PostgresSessionProvider extends PostgresSessionStore {
  constructor(client: PostgresClient, sessionId = "") {
    super(sourceOf(client, "PostgresSessionProvider"), sessionId);
  }
}

/** agents' `PostgresContextProvider(client, label)`: contextblocks' Postgres block provider. */
export class PostgresContextProvider extends BasePostgresContextProvider {
  constructor(client: PostgresClient, label?: string) {
    super(sourceOf(client, "PostgresContextProvider"), label);
  }
}

/** agents' `PostgresSearchProvider(client)`: contextblocks' Postgres full-text provider (label from `init`). */
export class PostgresSearchProvider extends BasePostgresSearchProvider {
  constructor(client: PostgresClient) {
    super(sourceOf(client, "PostgresSearchProvider"));
  }
}
