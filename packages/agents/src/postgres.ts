import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import {
  PostgresContextProvider as BasePostgresContextProvider,
  PostgresSearchProvider as BasePostgresSearchProvider,
  PostgresSessionStore,
  type PostgresSource,
} from "@contextblocks/postgres";
import { fromPg } from "@contextblocks/sql";
import { AgentsMessageTree } from "./agents-message-tree.js";

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

/**
 * An agents `PostgresConnection` (`execute` with `?` placeholders, as agents' own adapter writes them) becomes
 * the `pg.Client` shape contextblocks' Postgres classes take: each `$n` of a statement becomes `?`, with its
 * value, in order of appearance.
 */
function sourceOf(client: PostgresClient, name: string): PostgresSource {
  if (typeof client === "object" && client !== null && !("query" in client) && "execute" in client) {
    const connection = client as PostgresConnection;
    // One adapter per connection: the adapter's statement queue is what keeps one provider's transaction
    // free of another provider's statements on the same connection.
    let source = adapters.get(connection);
    if (source === undefined) {
      source = adapterOf(connection);
      adapters.set(connection, source);
    }
    return source;
  }
  if (typeof client !== "object" || client === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `new ${name}: expected a pg.Client, a pg.Pool or a PostgresConnection, got ${describeValue(client)}`,
    );
  }
  return client as PostgresSource;
}

const adapters = new WeakMap<PostgresConnection, PostgresSource>();

function adapterOf(connection: PostgresConnection): PostgresSource {
  // `execute(query, args)` has no named form: every statement is sent as text.
  return fromPg(
    {
      query: async (text: string, values: unknown[] = []) => {
        const args: (string | number | boolean | null)[] = [];
        const query = text.replace(/\$(\d+)/g, (_match, index: string) => {
          args.push(values[Number(index) - 1] as string | number | boolean | null);
          return "?";
        });
        const result = await connection.execute(query, args);
        return { rows: result.rows, rowCount: null };
      },
    },
    { namedStatements: false },
  );
}

/**
 * agents' `PostgresSessionProvider(client, sessionId)`: contextblocks' `PostgresSessionStore` read through the
 * message tree of `@contextblocks/sessions` (agents' provider methods, every rule applied once), on the same
 * tables (`assistant_messages`, `assistant_compactions`): rows agents' provider wrote are read as they are.
 */
export class PostgresSessionProvider extends AgentsMessageTree {
  constructor(client: PostgresClient, sessionId = "") {
    super(new PostgresSessionStore(sourceOf(client, "PostgresSessionProvider"), sessionId));
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

  /**
   * As agents' Postgres provider: `null` for a blank query, `"No results found."` when a query finds nothing
   * (contextblocks' providers, and agents' SQLite one, answer `null` for both).
   */
  override async search(query: string): Promise<string | null> {
    const found = await super.search(query);
    return found === null && query.trim() !== "" ? NO_RESULTS : found;
  }
}

/** What agents' `PostgresSearchProvider.search` answers when a query finds nothing. */
const NO_RESULTS = "No results found.";
