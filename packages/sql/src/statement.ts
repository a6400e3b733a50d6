import { describeValue } from "./describe-value.js";
import type { SqlStatement, SqlValue } from "./types.js";

/** A value the `sql` tag accepts between template parts: a bound value or a nested statement (a fragment). */
export type SqlTemplateValue = SqlValue | SqlStatement;

/**
 * Build a statement from a tagged template. Every `${value}` becomes a bound parameter, never SQL text;
 * a nested statement built with `sql` is spliced in as a fragment (its own values stay bound).
 *
 * ```ts
 * const statement = sql`SELECT content FROM notes WHERE label = ${label}`;
 * await client.run(statement);
 * ```
 */
export function sql(strings: TemplateStringsArray, ...values: SqlTemplateValue[]): SqlStatement {
  return buildStatement(strings, values);
}

/** Build a statement from template parts, as the `sql` tag and every client's `query` do. */
export function buildStatement(
  strings: readonly string[],
  values: readonly SqlTemplateValue[],
): SqlStatement {
  if (strings.length !== values.length + 1) {
    throw new TypeError(
      `sql: expected ${values.length + 1} template parts for ${values.length} values, got ${strings.length}`,
    );
  }
  // No fragment among the values: the template's own (frozen) parts serve as the statement's, so adapters
  // can remember the statement text per call site (see `statementText`).
  if (Object.isFrozen(strings) && !values.some(isSqlStatement)) {
    const bound: SqlValue[] = values.map(checkValue);
    return Object.freeze({ strings, values: Object.freeze(bound) });
  }
  const parts: string[] = [strings[0] ?? ""];
  const bound: SqlValue[] = [];
  values.forEach((value, index) => {
    const following = strings[index + 1] ?? "";
    if (isSqlStatement(value)) {
      // Splice the fragment: its first part joins the current part, its last part is joined by ours.
      const [first = "", ...rest] = value.strings;
      parts[parts.length - 1] += first;
      parts.push(...rest);
      bound.push(...value.values);
      parts[parts.length - 1] += following;
      return;
    }
    bound.push(checkValue(value, index));
    parts.push(following);
  });
  return Object.freeze({ strings: Object.freeze(parts), values: Object.freeze(bound) });
}

/** True for an object shaped like a `SqlStatement` (what the `sql` tag returns). */
export function isSqlStatement(value: unknown): value is SqlStatement {
  if (typeof value !== "object" || value === null || value instanceof Uint8Array) return false;
  const candidate = value as Partial<SqlStatement>;
  return (
    Array.isArray(candidate.strings) &&
    Array.isArray(candidate.values) &&
    candidate.strings.length === candidate.values.length + 1
  );
}

function checkValue(value: unknown, index: number): SqlValue {
  switch (typeof value) {
    case "string":
    case "number":
    case "bigint":
    case "boolean":
      return value;
    case "object":
      if (value === null || value instanceof Uint8Array) return value;
      break;
    case "undefined":
      throw new TypeError(`sql: value ${index + 1} is undefined; bind null for SQL NULL`);
  }
  throw new TypeError(
    `sql: value ${index + 1} is ${describeValue(value)}; bind a string, number, bigint, boolean, null or Uint8Array`,
  );
}

/**
 * A fragment of SQL text with no bound values, for identifiers and keywords a package writes itself
 * (table names, `ORDER BY` directions). Never pass user input: it is not escaped.
 */
export function raw(text: string): SqlStatement {
  return Object.freeze({ strings: Object.freeze([text]), values: Object.freeze([]) });
}

/**
 * Joins statements or bound values into one fragment with `separator` (SQL text) between them:
 * `join(["a", "b"])` is `?, ?` binding both. An empty list joins to `empty` (default `NULL`, so
 * `IN (${join([])})` matches nothing rather than being a syntax error).
 */
export function join(
  items: readonly SqlTemplateValue[],
  separator = ", ",
  empty: SqlStatement = raw("NULL"),
): SqlStatement {
  if (items.length === 0) return empty;
  return buildStatement(["", ...items.slice(1).map(() => separator), ""], items);
}
