/**
 * The text a search field indexes, with Latin letters' diacritics taken off, as FTS5's `unicode61` tokenizer
 * takes them off what SQLite indexes and as a query's words are folded (`planQuery`): "café" and "Café" are
 * indexed as 'cafe', so a search for "cafe" (how people type) finds them, and "Ångström" as 'angstrom', which
 * Postgres' `english` configuration, keeping diacritics, and the `C` locale, lower-casing ASCII only, did not.
 *
 * In SQL, in the generated column itself, so every writer's rows are folded (agents' own code, a restore, an
 * `UPDATE` by hand) and a table of rows already stored is folded when the column is rebuilt. Only a text that
 * holds a Latin letter with a diacritic, a combining mark, a Hangul jamo or a kana voiced mark is normalised (decomposed, the marks after a letter
 * of a to z dropped, composed again), about three times the `tsvector`'s own cost for such a text; any other
 * text pays one scan for those characters (about 3%). Then the words of addresses, links, paths and versions are
 * taken apart (`compoundJoiners`), another scan (about 4%). `normalize` needs a UTF8 database and Postgres 13:
 * the columns are rebuilt over this only there (schema.ts); elsewhere they index the text as written.
 */
export function foldedForIndex(column: string): string {
  const folded = `CASE WHEN ${column} ~ E'${foldable}' THEN normalize(regexp_replace(normalize(${column}, NFD),
    E'([a-zA-Z])${combiningMarks}+', E'\\\\1', 'g'), NFC) ELSE ${column} END`;
  return `regexp_replace(${folded}, E'${compoundJoiners}', E' \\\\1', 'g')`;
}

// Spelled for the regular expression (`\\uXXXX`, an escaped backslash in an `E''` string), never as an `E''`
// string's own escape: those become characters as the statement is read, and in a database that is not UTF8 a
// character outside its encoding fails the whole `DO` block, the branch that would use it or not.
/** Combining diacritical marks. */
const combiningMarks = "[\\\\u0300-\\\\u036f]";
/**
 * Latin letters that may carry a diacritic (Latin-1, Extended-A and -B, Extended Additional), a mark, a Hangul
 * jamo (Jamo, Extended-A and -B) or a combining kana voiced mark: a Korean or Japanese text stored decomposed, as
 * macOS writes it, is composed into its syllables and kana, the form a query is folded to (`foldToken` composes),
 * so "한국어" or "ラジオ" finds it whichever form it was stored in.
 */
const foldable =
  "[\\\\u00c0-\\\\u024f\\\\u1e00-\\\\u1eff\\\\u0300-\\\\u036f\\\\u1100-\\\\u11ff\\\\ua960-\\\\ua97f\\\\ud7b0-\\\\ud7ff\\\\u3099\\\\u309a]";
/**
 * What joins the words of an e-mail address, a host, a URL, a path or a version number ("john@example.com",
 * "github.com/org/repo", "/etc/hosts", "2.5.1", "C:\\Users"), when a word follows it: taken apart (the joiners
 * become a space, the first character of the word after them is kept: `\\1`), so each word is a lexeme of its own,
 * as FTS5 cuts them (Postgres' parser keeps each whole: "example" did not find "john@example.com"). Written
 * without a `?` (a lookahead, `(?=…)`, did the same): Cloudflare agents' `PostgresConnection` takes every `?` of a
 * statement as a placeholder, and its users' adapters number them in the text, string literals included. Its
 * shape is also how `foldPending` knows an expression of this release.
 */
const compoundJoiners = "[@./:\\\\\\\\]+([[:alnum:]])";

/**
 * A `DO` block that rebuilds generated `tsvector` columns of `table` over `foldedForIndex` of their text, once
 * (`foldPending`): a table an earlier release or Cloudflare agents created. Dropping a column drops its index;
 * the DDL that follows builds it again. The table is rewritten once, in the transaction of the DDL. A text of a
 * row another release indexed as written is then found both ways: a query asks for a word as written too
 * (written-query.ts).
 */
export function foldSearchColumns(table: string, columns: readonly { name: string; text: string }[]): string {
  const first = columns[0]?.name ?? "";
  const drops = columns.map(({ name }) => `DROP COLUMN IF EXISTS ${name}`).join(", ");
  // Added in one statement: the table is rewritten once for all of them.
  const adds = columns
    .map(
      ({ name, text }) => `ADD COLUMN ${name} TSVECTOR
    GENERATED ALWAYS AS (to_tsvector('english', ${foldedForIndex(text)})) STORED`,
    )
    .join(", ");
  // Run as text: `normalize(…, NFD)` is Postgres 13's syntax, and a `DO` block is parsed whole before it runs.
  const rebuild = `EXECUTE $fold$ALTER TABLE ${table} ${drops}$fold$; EXECUTE $fold$ALTER TABLE ${table} ${adds}$fold$;`;
  return `DO $$ BEGIN IF ${foldPending(table, first)} THEN ${rebuild} END IF; END $$`;
}

/**
 * Whether `column` of `table` (a generated `tsvector`) still indexes its text as written where it could fold it:
 * a UTF8 database on Postgres 13 or later (`normalize`), and an expression other than `foldedForIndex`'s (told
 * by its joiners' pattern, which Postgres prints back as written; the lookahead an earlier release wrote, the same
 * split, counts as current too, its `?` matched by `_`). A boolean SQL expression; `table` must exist.
 */
export function foldPending(table: string, column: string): string {
  return `(getdatabaseencoding() = 'UTF8' AND current_setting('server_version_num')::int >= 130000
    AND NOT EXISTS (SELECT 1 FROM pg_attrdef d
    JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE a.attrelid = '${table}'::regclass
    AND a.attname = '${column}' AND (pg_get_expr(d.adbin, d.adrelid) LIKE '%]+([[:alnum:]])%'
      OR pg_get_expr(d.adbin, d.adrelid) LIKE '%]+(_=[[:alnum:]])%')))`;
}
