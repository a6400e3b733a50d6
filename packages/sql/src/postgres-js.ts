import { statementText } from "./placeholders.js";
import { buildStatement } from "./statement.js";
import { namedStatementsOption, statementName } from "./statement-names.js";
import type { SqlClient, SqlClientOptions, SqlRow, SqlStatement, SqlValue } from "./types.js";

/** The rows of a `postgres` (porsager) query: an array with the command tag and the affected-row count. */
export interface PostgresJsRows extends ReadonlyArray<unknown> {
  readonly command?: string;
  readonly count?: number | null;
}

/** The part of a `postgres` (porsager) `sql` instance, or of its transaction, this package uses. */
export interface PostgresJsSqlLike {
  unsafe(text: string, parameters?: unknown[], options?: { prepare?: boolean }): PromiseLike<PostgresJsRows>;
}

/** Options of `fromPostgresJs`. */
export interface PostgresJsOptions extends SqlClientOptions {
  /**
   * Run each statement as a prepared statement (`unsafe(text, values, { prepare: true })`), so every
   * connection parses a text once. Default `true`; an instance made with `prepare: false` (for a pooler in
   * transaction mode) never prepares, whatever this says.
   */
  namedStatements?: boolean | undefined;
}

/** The part of a `postgres` (porsager) `sql` instance this package uses: `unsafe` and `begin`. */
export interface PostgresJsSql extends PostgresJsSqlLike {
  begin<T>(work: (transaction: PostgresJsSqlLike) => T | Promise<T>): Promise<unknown>;
}

const WRITE_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * A `SqlClient` over the `postgres` package (porsager): `sql.unsafe(text, values)` with `$n` placeholders
 * (every value bound; the driver types booleans, bigints and byte arrays itself), `batch` inside
 * `sql.begin`, which reserves one connection for the transaction and rolls back on the first error.
 * `onStatement` reports `changes` (the driver's `count`) for writes. Statements are prepared once per
 * connection unless `namedStatements: false`.
 */
export function fromPostgresJs(source: PostgresJsSql, options: PostgresJsOptions = {}): SqlClient {
  const { onStatement } = options;
  const named = namedStatementsOption(options.namedStatements, "fromPostgresJs");

  const execute = async (connection: PostgresJsSqlLike, statement: SqlStatement): Promise<SqlRow[]> => {
    const text = statementText(statement, "postgres");
    // The same bound on prepared texts as node-postgres's names (postgres.js names them itself).
    const prepare = named && statementName(text) !== undefined;
    const rows = await connection.unsafe(text, [...statement.values], { prepare });
    if (onStatement !== undefined) {
      const command = rows.command?.toUpperCase();
      const write = command !== undefined && WRITE_COMMANDS.has(command) && typeof rows.count === "number";
      onStatement(write ? { text, changes: rows.count as number } : { text });
    }
    return [...rows] as SqlRow[];
  };

  return {
    dialect: "postgres",
    atomic: true,
    async query<Row = SqlRow>(strings: TemplateStringsArray, ...values: SqlValue[]): Promise<Row[]> {
      return (await execute(source, buildStatement(strings, values))) as Row[];
    },
    async run<Row = SqlRow>(statement: SqlStatement): Promise<Row[]> {
      return (await execute(source, statement)) as Row[];
    },
    async batch(statements: readonly SqlStatement[]): Promise<SqlRow[][]> {
      if (statements.length === 0) return [];
      let results: SqlRow[][] = [];
      await source.begin(async (transaction) => {
        results = [];
        for (const statement of statements) results.push(await execute(transaction, statement));
      });
      return results;
    },
  };
}

/** True for a `postgres` (porsager) `sql` instance: a function with `unsafe` and `begin`. */
export function isPostgresJs(value: unknown): value is PostgresJsSql {
  if (typeof value !== "function") return false;
  const candidate = value as unknown as { unsafe?: unknown; begin?: unknown };
  return typeof candidate.unsafe === "function" && typeof candidate.begin === "function";
}
