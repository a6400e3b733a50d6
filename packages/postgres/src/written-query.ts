import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";

/**
 * A term's (or pair's) `tsquery`: its folded words, ORed with the words as the query wrote them where folding
 * changed more than ASCII case (`QueryTerm.written`). The query is folded as FTS5 folds what it indexes; the
 * search fields fold diacritics too (folded-words.ts), but where they have not been rebuilt so (a knowledge table
 * before its first write, a database that is not UTF8, Postgres 12) "café" is indexed as 'café', and under
 * locale `C` a capital outside Latin keeps its case ('Москва'), so such a word asks for both. Both are bound values
 * whatever the query (`written` is `null` when it is the folded text), so a statement's text, and with it its
 * prepared plan, is the same for every query of its shape. A `folded` of `null` is a NULL query (both functions
 * are strict: nothing is parsed, no notice is raised).
 */
export function writtenOr(
  build: "plainto_tsquery" | "phraseto_tsquery",
  folded: string | null,
  written: string | null,
): SqlStatement {
  const query = (text: SqlStatement) => sql`${raw(build)}('english', ${text})`;
  return sql`CASE WHEN ${written}::text IS NULL THEN ${query(sql`${folded}`)}
    ELSE ${query(sql`${folded}`)} || ${query(sql`${written}::text`)} END`;
}
