import { type SqlStatement, sql } from "@contextblocks/sql";
import { datePatterns } from "@contextblocks/text";

/**
 * Whether a text says when (`datePatterns`, `@contextblocks/text`): 1 or 0, as SQLite's `LIKE` decides it. A
 * search row stores it when it is written (`assistant_fts.says_when`), so a search that asks when reads a
 * flag instead of matching every pattern against every candidate's text; a row without it (written by
 * another writer) is checked at query time with this same expression, so either way gives the same answer.
 */
export function saysWhen(text: SqlStatement): SqlStatement {
  return sql`EXISTS (SELECT 1 FROM json_each(${JSON.stringify(datePatterns)}) WHERE ' ' || ${text} LIKE value)`;
}
