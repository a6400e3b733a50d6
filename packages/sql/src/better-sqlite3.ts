import { withDatabase } from "./database-of.js";
import { statementText } from "./placeholders.js";
import { synchronousSqliteClient } from "./sqlite-client.js";
import { booleanAsInteger } from "./sqlite-values.js";
import type { SqlClient, SqlClientOptions, SqlRow, SqlStatement } from "./types.js";

/** The part of a better-sqlite3 prepared statement this package uses. */
export interface BetterSqlite3Statement {
  /** True when the statement returns rows (then `all()`), false otherwise (then `run()`). */
  readonly reader: boolean;
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number };
}

/** The part of a better-sqlite3 `Database` this package uses. */
export interface BetterSqlite3Database {
  prepare(source: string): BetterSqlite3Statement;
  /** Wraps `fn` so each call runs in BEGIN … COMMIT, rolled back when `fn` throws. */
  // biome-ignore lint/suspicious/noExplicitAny: better-sqlite3 types the arguments from `fn`; we pass our own.
  transaction(fn: (...parameters: any[]) => unknown): (...parameters: any[]) => unknown;
}

export interface BetterSqlite3Options extends SqlClientOptions {
  /** Prepared statements kept per client, least recently used dropped first. Default 100. */
  statementCacheSize?: number | undefined;
}

/**
 * A `SqlClient` over a better-sqlite3 `Database`. Statements are prepared once and cached by text;
 * `reader` decides between `all()` and `run()`; `batch` runs inside `db.transaction`, so it is atomic.
 * `onStatement` reports `changes` for statements that return no rows.
 */
export function fromBetterSqlite3(
  database: BetterSqlite3Database,
  options: BetterSqlite3Options = {},
): SqlClient {
  const { onStatement } = options;
  const cacheSize = options.statementCacheSize ?? 100;
  const cache = new Map<string, BetterSqlite3Statement>();

  const prepare = (text: string): BetterSqlite3Statement => {
    const cached = cache.get(text);
    if (cached !== undefined) {
      // Move to the most recently used end.
      cache.delete(text);
      cache.set(text, cached);
      return cached;
    }
    const prepared = database.prepare(text);
    if (cacheSize > 0) {
      cache.set(text, prepared);
      if (cache.size > cacheSize) {
        const oldest = cache.keys().next();
        if (oldest.done !== true) cache.delete(oldest.value);
      }
    }
    return prepared;
  };

  const execute = (statement: SqlStatement): SqlRow[] => {
    const text = statementText(statement, "sqlite");
    const prepared = prepare(text);
    const parameters = statement.values.map(booleanAsInteger);
    if (prepared.reader) {
      const rows = prepared.all(...parameters) as SqlRow[];
      onStatement?.({ text });
      return rows;
    }
    const { changes } = prepared.run(...parameters);
    onStatement?.({ text, changes });
    return [];
  };

  const executeAll = database.transaction((statements: readonly SqlStatement[]) =>
    statements.map(execute),
  ) as (statements: readonly SqlStatement[]) => SqlRow[][];

  return withDatabase(synchronousSqliteClient(execute, executeAll, false), database);
}
