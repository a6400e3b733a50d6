import { ContextError, describeValue, rowLabel, type WritableContextProvider } from "@contextblocks/core";
import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { checkLabel, checkNamespace } from "./names.js";
import { type BlockStoreOptions, blockStoreOptions, ownerOf } from "./provider-options.js";
import { BLOCKS_TABLE, TableAccess } from "./tables.js";
import { checkStorable } from "./text-checks.js";

/** Options of `SqlContextProvider`: those of every block store, and the name its errors begin with. */
export interface SqlContextProviderOptions extends BlockStoreOptions {
  /** The class name errors begin with (`SqliteContextProvider`, `PostgresContextProvider`). */
  owner?: string | undefined;
}

/** The upsert of a block's row; unchanged content writes nothing (and leaves `updated_at` as it was). */
const UPSERT = {
  sqlite: (label: string, content: string) =>
    sql`INSERT INTO cf_agents_context_blocks (label, content) VALUES (${label}, ${content})
ON CONFLICT(label) DO UPDATE SET content = excluded.content, updated_at = CURRENT_TIMESTAMP
WHERE content IS NOT excluded.content`,
  postgres: (label: string, content: string) =>
    sql`INSERT INTO cf_agents_context_blocks AS block (label, content) VALUES (${label}, ${content})
ON CONFLICT (label) DO UPDATE SET content = excluded.content, updated_at = NOW()
WHERE block.content IS DISTINCT FROM excluded.content`,
} satisfies Record<SqlClient["dialect"], (label: string, content: string) => SqlStatement>;

/**
 * A writable context block stored as one row of `cf_agents_context_blocks` (the table `agents/context`
 * uses) on any `SqlClient`, SQLite or Postgres. The row's label is the block's label, or with a namespace
 * `U+001F + JSON.stringify([namespace, label])` (see `rowLabel`). Also the store of a frozen prompt.
 *
 * `get` is one statement and reads one row; a missing table reads as no content and creates nothing. `set`
 * is one upsert that writes nothing when the content is unchanged; the first write creates the table (only
 * this one).
 */
export class SqlContextProvider implements WritableContextProvider {
  readonly #access: TableAccess;
  readonly #namespace: string | undefined;
  readonly #owner: string;
  #label: string | undefined;

  constructor(client: SqlClient, labelOrOptions?: string | SqlContextProviderOptions) {
    this.#owner = ownerOf(labelOrOptions, "SqlContextProvider");
    const options = blockStoreOptions(labelOrOptions, this.#owner);
    this.#access = new TableAccess(client, BLOCKS_TABLE, options.createTables ?? true, this.#owner);
    this.#namespace = checkNamespace(options.namespace, this.#owner, client.dialect);
    this.#label =
      options.label === undefined
        ? undefined
        : checkLabel(options.label, this.#namespace, this.#owner, client.dialect);
  }

  /** The block's label: given to the constructor, or filled in by `init`. */
  get label(): string | undefined {
    return this.#label;
  }

  /** The namespace this provider's rows live in, if any. */
  get namespace(): string | undefined {
    return this.#namespace;
  }

  /** The client this provider runs its statements on. */
  get client(): SqlClient {
    return this.#access.client;
  }

  /** Called by `ContextBlocks` before first use; fills in the label only when none was given. */
  init(label: string): void {
    if (this.#label === undefined) {
      this.#label = checkLabel(label, this.#namespace, this.#owner, this.#access.client.dialect);
    }
  }

  /** The block's content, or `null` when it has none (no row, or no table yet). One row read on a hit. */
  async get(): Promise<string | null> {
    const key = this.#key();
    const client = this.#access.client;
    const rows = await this.#access.read(
      () =>
        client.query<{ content: unknown }>`SELECT content FROM cf_agents_context_blocks WHERE label = ${key}`,
      [],
    );
    const content = rows[0]?.content;
    if (content === undefined || content === null) return null;
    if (typeof content !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `${this.#owner}: the stored content of "${this.#label}" is ${describeValue(content)}, not text`,
        this.#labelOption(),
      );
    }
    return content;
  }

  /**
   * Replaces the block's content (an upsert of its row). Writing the content the row already holds writes
   * nothing. Refuses anything but a string the database stores unchanged.
   */
  async set(content: string): Promise<void> {
    const key = this.#key();
    if (typeof content !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.set: content of "${this.#label}" must be a string, got ${describeValue(content)}`,
        this.#labelOption(),
      );
    }
    const dialect = this.#access.client.dialect;
    checkStorable(content, "content", this.#owner, dialect, "INVALID_INPUT", this.#label);
    await this.#access.write([UPSERT[dialect](key, content)]);
  }

  #key(): string {
    if (this.#label === undefined) {
      throw new ContextError(
        "INVALID_CONFIG",
        `${this.#owner} has no label: pass one to the constructor or declare it as a block so init(label) fills it in`,
      );
    }
    return rowLabel(this.#label, this.#namespace);
  }

  #labelOption(): { label: string } | undefined {
    return this.#label === undefined ? undefined : { label: this.#label };
  }
}
