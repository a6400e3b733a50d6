/**
 * The floor a knowledge search is held to: what a user would write instead of installing a search provider.
 *
 * - SQLite: a plain two-column FTS5 table (`key`, `content`, `tokenize = 'porter unicode61'`) holding the same
 *   entries after the same writes, queried `SELECT key, content … WHERE t MATCH ? ORDER BY rank LIMIT 10`,
 *   MATCH being the query's content words (stopwords removed, as `planQuery` of `@contextblocks/text` leaves
 *   them) quoted and ORed.
 * - Postgres: a plain table with a generated `tsvector` column and a GIN index over it, queried with one
 *   statement: the same words ORed into a `tsquery`, ranked by `ts_rank`, top 10.
 *
 * Both are prepared once; the MATCH text is built from the query inside the timed call, as a user's code would.
 */
import { planQuery } from "@contextblocks/text";
import type Database from "better-sqlite3";

/** The query's content words, quoted for FTS5 and ORed; `null` when the query has none. */
export function floorMatch(query: string): string | null {
  const terms = planQuery(query)?.terms ?? [];
  if (terms.length === 0) return null;
  return terms.map((term) => `"${term.word.replaceAll('"', '""')}"`).join(" OR ");
}

/** The query's content words as a Postgres `tsquery` text (`'a' | 'b'`); `null` when it has none. */
export function floorTsquery(query: string): string | null {
  const terms = planQuery(query)?.terms ?? [];
  if (terms.length === 0) return null;
  return terms.map((term) => `'${term.word.replaceAll("'", "''").replaceAll("\\", "\\\\")}'`).join(" | ");
}

/** The plain FTS5 table, in the database it is given (beside the provider's tables). */
export class SqliteSearchFloor {
  readonly #insert: Database.Statement;
  readonly #search: Database.Statement;

  constructor(database: Database.Database, table = "search_floor") {
    database.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING fts5(key, content, tokenize = 'porter unicode61')`,
    );
    this.#insert = database.prepare(`INSERT INTO ${table} (key, content) VALUES (?, ?)`);
    this.#search = database.prepare(
      `SELECT key, content FROM ${table} WHERE ${table} MATCH ? ORDER BY rank LIMIT 10`,
    );
  }

  /** One new entry (the bench writes every key once). */
  add(key: string, content: string): void {
    this.#insert.run(key, content);
  }

  search(query: string): unknown[] {
    const match = floorMatch(query);
    return match === null ? [] : this.#search.all(match);
  }
}

/** What the Postgres floor needs of a `pg` client. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** The plain `tsvector` + GIN table on Postgres. */
export class PostgresSearchFloor {
  constructor(
    private readonly client: PgQueryable,
    private readonly table = "search_floor",
  ) {}

  async create(): Promise<void> {
    await this.client.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
      key TEXT PRIMARY KEY,
      content TEXT NOT NULL,
      content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)`);
    await this.client.query(
      `CREATE INDEX IF NOT EXISTS ${this.table}_fts ON ${this.table} USING GIN (content_tsv)`,
    );
  }

  async add(key: string, content: string): Promise<void> {
    await this.client.query(`INSERT INTO ${this.table} (key, content) VALUES ($1, $2)`, [key, content]);
  }

  async search(query: string): Promise<unknown[]> {
    const text = floorTsquery(query);
    if (text === null) return [];
    const result = await this.client.query(
      `SELECT key, content FROM ${this.table}, to_tsquery('english', $1) AS query
       WHERE content_tsv @@ query ORDER BY ts_rank(content_tsv, query) DESC LIMIT 10`,
      [text],
    );
    return result.rows;
  }
}
