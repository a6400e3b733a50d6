import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";

/**
 * A term's (or pair's) `tsquery`: its folded words, ORed with the words as the query wrote them where folding
 * removed diacritics. The query is folded as FTS5 folds what it indexes, but Postgres' `english` configuration
 * keeps diacritics ("café" is indexed as 'café', never 'cafe'), so "café" asks for both. Both are bound values
 * whatever the query (`written` is `null` when it is the folded text), so a statement's text, and with it its
 * prepared plan, is the same for every query of its shape.
 */
export function writtenOr(
  build: "plainto_tsquery" | "phraseto_tsquery",
  folded: string,
  written: string | null,
): SqlStatement {
  const query = (text: SqlStatement) => sql`${raw(build)}('english', ${text})`;
  return sql`CASE WHEN ${written}::text IS NULL THEN ${query(sql`${folded}`)}
    ELSE ${query(sql`${folded}`)} || ${query(sql`${written}::text`)} END`;
}
