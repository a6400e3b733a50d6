import type { SqlDialect, SqlStatement } from "./types.js";

/**
 * The statement's text with the dialect's placeholders between the literal parts:
 * `?` for SQLite, `$1`, `$2`, … for Postgres.
 */
export function statementText(statement: SqlStatement, dialect: SqlDialect): string {
  const { strings } = statement;
  // A statement written at one call site of the `sql` tag (or a client's `query`) keeps the template's own
  // parts array, so its text is built once per dialect and then looked up.
  let texts = known.get(strings);
  const cached = texts?.[dialect];
  if (cached !== undefined) return cached;
  let text = strings[0] ?? "";
  for (let index = 1; index < strings.length; index++) {
    text += (dialect === "postgres" ? `$${index}` : "?") + (strings[index] ?? "");
  }
  if (texts === undefined) {
    texts = {};
    known.set(strings, texts);
  }
  texts[dialect] = text;
  return text;
}

/** Statement texts by the parts array they were built from (parts arrays are frozen, so never change). */
const known = new WeakMap<readonly string[], Partial<Record<SqlDialect, string>>>();
