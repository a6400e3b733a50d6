import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { datePatterns } from "@contextblocks/text";

/**
 * Every `datePatterns` pattern against `x`, ORed, written into the statement: a table-valued function
 * (`json_each`) would be rows read on a Durable Object, one per pattern. The patterns are our own
 * constants (letters, spaces and `%`), never user text.
 */
const anyPattern = datePatterns.map((pattern) => `x LIKE '${pattern}'`).join(" OR ");

/**
 * Whether a text says when (`datePatterns`, `@contextblocks/text`): 1 or 0, as SQLite's `LIKE` decides it. A
 * search row stores it when it is written (`assistant_fts.says_when`), so a search that asks when reads a
 * flag instead of matching every pattern against every candidate's text; a row without it (written by
 * another writer) is checked at query time with this same expression, so either way gives the same answer.
 */
export function saysWhen(text: SqlStatement): SqlStatement {
  return sql`coalesce((SELECT ${raw(anyPattern)} FROM (SELECT ' ' || ${text} AS x)), 0)`;
}
