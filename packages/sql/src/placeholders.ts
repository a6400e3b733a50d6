import type { SqlDialect, SqlStatement } from "./types.js";

/**
 * The statement's text with the dialect's placeholders between the literal parts:
 * `?` for SQLite, `$1`, `$2`, … for Postgres.
 */
export function statementText(statement: SqlStatement, dialect: SqlDialect): string {
  const { strings } = statement;
  let text = strings[0] ?? "";
  for (let index = 1; index < strings.length; index++) {
    text += (dialect === "postgres" ? `$${index}` : "?") + (strings[index] ?? "");
  }
  return text;
}
