import { ContextError, type SearchProvider } from "@contextblocks/core";
import { describeValue, rowLabel } from "@contextblocks/core/store-kit";
import { type SqlClient, type StatementObserver, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import {
  checkNamespace,
  checkSqlLabel,
  checkStorable,
  ensureTable,
  TableAccess,
} from "@contextblocks/sql-stores";
import { planQuery, searchableText, writtenText } from "@contextblocks/text";
import { type PostgresSource, postgresClient } from "./client.js";
import { foldPending } from "./folded-words.js";
import { SEARCH_TABLE } from "./schema.js";
import { searchStatement } from "./search-statement.js";

const PROVIDER = "PostgresSearchProvider";

/** Options of `PostgresSearchProvider`. */
export interface PostgresSearchProviderOptions {
  /** The block label. Usually left out: `ContextBlocks` calls `init(label)` before first use. */
  label?: string | undefined;
  /** Keeps entries of one label apart per tenant or session sharing a database (rows keyed as in sqlite). */
  namespace?: string | undefined;
  /** How many matches `search` returns at most. Default 10. */
  limit?: number | undefined;
  /** Whether a query also matches the words of the keys (ranked above content words). Default `true`. */
  searchKeys?: boolean | undefined;
  /** Create the tables on first use when they are missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

const defaultLimit = 10;

/** Clients whose knowledge table was found folding its words (or left as it is): not asked again. */
const foldChecked = new WeakSet<SqlClient>();

/**
 * A searchable context block on Postgres full-text search: keyed entries in `cf_agents_search_entries`
 * (a generated `tsvector` column with a GIN index, as Cloudflare agents' Sessions API declares it), the same question recall as
 * `@contextblocks/text` (its `planQuery`: stopwords out, terms ORed), ranked by coverage of the query's
 * rarer terms and `ts_rank_cd`. Query text is bound as words, never read as `tsquery` syntax.
 *
 * - `get()`: `"N entries indexed."`, or `null` when the label has no entries.
 * - `search(query)`: the best matches as `[key]` + newline + content, separated by blank lines, or `null`.
 * - `set(key, content)`: adds or replaces one entry. `delete(key)`: removes one.
 *
 * Every call is one statement (one round trip). A client's first `set` also asks, in that statement, whether the
 * table still indexes words with their diacritics (one an earlier release or Cloudflare agents created); then the
 * table statements run once to fold them (folded-words.ts).
 */
export class PostgresSearchProvider implements SearchProvider {
  readonly #client: SqlClient;
  readonly #namespace: string | undefined;
  readonly #limit: number;
  readonly #searchKeys: boolean;
  readonly #access: TableAccess;
  #label: string | undefined;

  constructor(source: PostgresSource, options: PostgresSearchProviderOptions | string = {}) {
    const settings: PostgresSearchProviderOptions =
      typeof options === "string" ? { label: options } : options;
    if (typeof settings !== "object" || settings === null) {
      throw invalidConfig(`options must be an object or a label string, got ${describeValue(settings)}`);
    }
    const { limit = defaultLimit, searchKeys = true, createTables = true } = settings;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw invalidConfig(
        `limit must be a positive integer (at most Number.MAX_SAFE_INTEGER), got ${describeValue(limit)}`,
      );
    }
    if (typeof searchKeys !== "boolean") {
      throw invalidConfig(`searchKeys must be a boolean, got ${describeValue(searchKeys)}`);
    }
    if (typeof createTables !== "boolean") {
      throw invalidConfig(`createTables must be a boolean, got ${describeValue(createTables)}`);
    }
    this.#client = postgresClient(source, settings.onStatement, PROVIDER);
    this.#namespace = checkNamespace(settings.namespace, PROVIDER, "postgres");
    this.#label =
      settings.label === undefined
        ? undefined
        : checkSqlLabel(settings.label, this.#namespace, PROVIDER, "postgres");
    this.#limit = limit;
    this.#searchKeys = searchKeys;
    this.#access = new TableAccess(this.#client, SEARCH_TABLE, createTables, PROVIDER);
  }

  /** The block label, once given (by the options or by `init`). */
  get label(): string | undefined {
    return this.#label;
  }

  /** The namespace entries are kept in, if any. */
  get namespace(): string | undefined {
    return this.#namespace;
  }

  /** Called by `ContextBlocks` with the block's label before first use. */
  init(label: string): void {
    this.#label = checkSqlLabel(label, this.#namespace, PROVIDER, "postgres");
  }

  /** `"N entries indexed."` or `null`: a count over the label's rows of the primary key. */
  async get(): Promise<string | null> {
    const stored = this.#storedLabel();
    const rows = await this.#read<{ entries: unknown }>(
      sql`SELECT count(*) AS entries FROM cf_agents_search_entries WHERE label = ${stored}`,
    );
    const entries = Number(rows[0]?.entries ?? 0);
    return entries > 0 ? `${entries} entries indexed.` : null;
  }

  async search(query: string): Promise<string | null> {
    if (typeof query !== "string")
      throw this.#invalidInput(`search: query must be a string, got ${describeValue(query)}`);
    const stored = this.#storedLabel();
    const plan = planQuery(query);
    if (plan === null) return null;
    const rows = await this.#read<{ key: unknown; content: unknown }>(
      searchStatement(stored, plan, this.#limit, this.#searchKeys),
    );
    if (rows.length === 0) return null;
    // Content is stored with its words in a compatibility form after it (`searchableText`): returned as written.
    return rows.map((row) => `[${String(row.key)}]\n${writtenText(String(row.content))}`).join("\n\n");
  }

  async set(key: string, content: string): Promise<void> {
    this.#checkKey(key, "set");
    if (typeof content !== "string") {
      throw this.#invalidInput(`set: content must be a string, got ${describeValue(content)}`);
    }
    checkStorable(content, "content", PROVIDER, "postgres", "INVALID_INPUT", this.#label);
    const stored = this.#storedLabel();
    const upsert = sql`INSERT INTO cf_agents_search_entries AS entry (label, key, content)
VALUES (${stored}, ${key}, ${searchableText(content)})
ON CONFLICT (label, key) DO UPDATE SET content = excluded.content, updated_at = NOW()
WHERE entry.content IS DISTINCT FROM excluded.content`;
    if (foldChecked.has(this.#client)) {
      await this.#access.write([upsert]);
      return;
    }
    // A client's first write also asks whether the table still indexes words as written (one an earlier release
    // or Cloudflare agents created), in the same statement; if so, the table statements run once to fold it.
    const [rows = []] = await this.#access.write([
      sql`WITH written AS (${upsert} RETURNING 1)
SELECT CASE WHEN ${raw(foldPending("cf_agents_search_entries", "content_tsv"))} THEN 1 ELSE 0 END AS pending`,
    ]);
    // A number, which every driver reads alike (a driver that sends booleans as text would read 'f' as true).
    if (Number(rows[0]?.pending) === 1 && this.#access.createTables)
      await ensureTable(this.#client, SEARCH_TABLE);
    foldChecked.add(this.#client);
  }

  async delete(key: string): Promise<void> {
    this.#checkKey(key, "delete");
    const stored = this.#storedLabel();
    await this.#read(sql`DELETE FROM cf_agents_search_entries WHERE label = ${stored} AND key = ${key}`);
  }

  /** Runs a statement that needs the table but should not create it: a missing table reads as empty. */
  #read<Row>(statement: Parameters<SqlClient["run"]>[0]): Promise<Row[]> {
    return this.#access.read(() => this.#client.run<Row>(statement), []);
  }

  #checkKey(key: unknown, method: string): asserts key is string {
    if (typeof key !== "string" || key.length === 0) {
      throw this.#invalidInput(`${method}: key must be a non-empty string, got ${describeValue(key)}`);
    }
    checkStorable(key, "key", PROVIDER, "postgres", "INVALID_INPUT", this.#label);
  }

  #storedLabel(): string {
    if (this.#label === undefined) {
      throw invalidConfig("no label: pass { label } to the constructor or call init(label) before use");
    }
    return rowLabel(this.#label, this.#namespace);
  }

  #invalidInput(message: string): ContextError {
    const label = this.#label;
    return new ContextError(
      "INVALID_INPUT",
      `${PROVIDER}${label === undefined ? "" : ` "${label}"`} ${message}`,
      label === undefined ? undefined : { label },
    );
  }
}

function invalidConfig(message: string): ContextError {
  return new ContextError("INVALID_CONFIG", `${PROVIDER}: ${message}`);
}
