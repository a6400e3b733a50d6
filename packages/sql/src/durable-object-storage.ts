import { withDatabase } from "./database-of.js";
import { statementText } from "./placeholders.js";
import { synchronousSqliteClient } from "./sqlite-client.js";
import { toDurableObjectValue } from "./sqlite-values.js";
import type { SqlClient, SqlClientOptions, SqlRow, SqlStatement } from "./types.js";

/** The part of a Durable Object SQL cursor this package uses. */
export interface DurableObjectSqlCursor {
  toArray(): Record<string, unknown>[];
  /** Rows read so far; final once the cursor is fully consumed. */
  readonly rowsRead: number;
  /** Rows written so far; final once the cursor is fully consumed. */
  readonly rowsWritten: number;
}

/** The part of `ctx.storage.sql` this package uses. */
export interface DurableObjectSqlStorage {
  exec(query: string, ...bindings: unknown[]): DurableObjectSqlCursor;
}

/**
 * The part of a Durable Object's `ctx.storage` this package uses: `sql.exec` for statements and
 * `transactionSync` for atomic groups (Durable Objects refuse `BEGIN` and `SAVEPOINT`).
 */
export interface DurableObjectStorageLike {
  readonly sql: DurableObjectSqlStorage;
  transactionSync<T>(closure: () => T): T;
}

/**
 * A `SqlClient` over a Durable Object's SQLite storage (`ctx.storage`). Statements run through
 * `sql.exec`; `batch` runs inside `transactionSync`, so it is atomic. `onStatement` receives each
 * statement's `rowsRead` and `rowsWritten`, the figures Cloudflare bills.
 */
export function fromDurableObjectStorage(
  storage: DurableObjectStorageLike,
  options: SqlClientOptions = {},
): SqlClient {
  const { onStatement } = options;

  const execute = (statement: SqlStatement): SqlRow[] => {
    const text = statementText(statement, "sqlite");
    const cursor = storage.sql.exec(text, ...statement.values.map(toDurableObjectValue));
    const rows = cursor.toArray();
    // The counters are final only once the cursor is consumed, which toArray() did.
    onStatement?.({ text, rowsRead: cursor.rowsRead, rowsWritten: cursor.rowsWritten });
    return rows;
  };

  const client = synchronousSqliteClient(
    execute,
    (statements) => storage.transactionSync(() => statements.map(execute)),
    true,
  );
  return withDatabase(client, storage);
}
