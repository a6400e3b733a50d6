import { buildStatement } from "./statement.js";
import type { SqlClient, SqlRow, SqlStatement, SqlValue } from "./types.js";

/**
 * A `SqlClient` over a synchronous SQLite backend (better-sqlite3, Durable Object storage): `execute` runs one
 * statement and returns its rows, `executeAtomically` runs a group all-or-nothing; `billsRows` as
 * `SqlClient.billsRows`.
 */
export function synchronousSqliteClient(
  execute: (statement: SqlStatement) => SqlRow[],
  executeAtomically: (statements: readonly SqlStatement[]) => SqlRow[][],
  billsRows: boolean,
): SqlClient {
  return {
    dialect: "sqlite",
    atomic: true,
    billsRows,
    async query<Row = SqlRow>(strings: TemplateStringsArray, ...values: SqlValue[]): Promise<Row[]> {
      return execute(buildStatement(strings, values)) as Row[];
    },
    async run<Row = SqlRow>(statement: SqlStatement): Promise<Row[]> {
      return execute(statement) as Row[];
    },
    async batch(statements: readonly SqlStatement[]): Promise<SqlRow[][]> {
      if (statements.length === 0) return [];
      return executeAtomically(statements);
    },
    runSync<Row = SqlRow>(statement: SqlStatement): Row[] {
      return execute(statement) as Row[];
    },
    batchSync(statements: readonly SqlStatement[]): SqlRow[][] {
      if (statements.length === 0) return [];
      return executeAtomically(statements);
    },
  };
}
