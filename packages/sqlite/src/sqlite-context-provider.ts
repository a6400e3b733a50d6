import { ContextError, describeValue, type WritableContextProvider } from "@contextblocks/core";
import { type SqlClient, type SqlSource, type StatementObserver, sql, toSqlClient } from "@contextblocks/sql";
import { checkLabel, checkNamespace, checkWellFormed, rowLabel } from "./storage-key.js";
import { CREATE_TABLE, isBlocksTableMissing } from "./table.js";

/** Options of `SqliteContextProvider` (the object form of its second argument). */
export interface SqliteContextProviderOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /**
   * Keeps this provider's rows apart from every other namespace's and from plain `agents/context` rows: a
   * non-empty string, or omitted for none (core's `checkNamespace`).
   */
  namespace?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * A writable context block stored as one row of `cf_agents_context_blocks` (the table `agents/context`
 * uses) in any SQLite database: a Durable Object's `ctx.storage`, an object with a tagged-template `sql`
 * (an `agents` Agent), a better-sqlite3 `Database`, or a `SqlClient`.
 *
 * The table is created on the first `set`; `get` on a database without it reads as "no content" and writes
 * nothing. `get` of an existing row is one statement and one row read.
 *
 * ```ts
 * new SqliteContextProvider(this, "memory");                 // agents/context's form (AgentContextProvider)
 * new SqliteContextProvider(ctx.storage, { label: "memory", namespace: "tenant-a" });
 * ```
 */
export class SqliteContextProvider implements WritableContextProvider {
  readonly #client: SqlClient;
  readonly #namespace: string | undefined;
  #label: string | undefined;

  constructor(source: SqlSource, labelOrOptions?: string | SqliteContextProviderOptions) {
    const options: SqliteContextProviderOptions =
      typeof labelOrOptions === "string" ? { label: labelOrOptions } : (labelOrOptions ?? {});
    if (typeof options !== "object" || options === null) {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteContextProvider: the second argument must be a label or an options object, got ${describeValue(options)}`,
      );
    }
    this.#client = toSqlClient(source, { onStatement: options.onStatement });
    if (this.#client.dialect !== "sqlite") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteContextProvider needs a SQLite database; this client's dialect is "${this.#client.dialect}"`,
      );
    }
    this.#namespace = checkNamespace(options.namespace);
    this.#label = options.label === undefined ? undefined : checkLabel(options.label, this.#namespace);
  }

  /** The block's label: given to the constructor, or filled in by `init`. */
  get label(): string | undefined {
    return this.#label;
  }

  /** The namespace this provider's rows live in, if any. */
  get namespace(): string | undefined {
    return this.#namespace;
  }

  /** Called by `ContextBlocks` before first use; fills in the label only when none was given. */
  init(label: string): void {
    if (this.#label === undefined) this.#label = checkLabel(label, this.#namespace);
  }

  /** The block's content, or `null` when it has none (no row, or no table yet). One row read on a hit. */
  async get(): Promise<string | null> {
    const key = this.#key();
    let rows: { content: unknown }[];
    try {
      rows = await this.#client.query<{
        content: unknown;
      }>`SELECT content FROM cf_agents_context_blocks WHERE label = ${key}`;
    } catch (error) {
      if (isBlocksTableMissing(error)) return null;
      throw error;
    }
    const content = rows[0]?.content;
    if (content === undefined || content === null) return null;
    if (typeof content !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `SqliteContextProvider: the stored content of "${this.#label}" is ${describeValue(content)}, not text`,
        this.#labelOption(),
      );
    }
    return content;
  }

  /**
   * Replaces the block's content (an upsert of its row). Writing the content the row already holds writes
   * nothing (and leaves `updated_at` as it was). Refuses anything but a well-formed string.
   */
  async set(content: string): Promise<void> {
    const key = this.#key();
    if (typeof content !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `SqliteContextProvider.set: content of "${this.#label}" must be a string, got ${describeValue(content)}`,
        this.#labelOption(),
      );
    }
    checkWellFormed(content, "content", "INVALID_INPUT", this.#label);
    const upsert = sql`INSERT INTO cf_agents_context_blocks (label, content) VALUES (${key}, ${content})
ON CONFLICT(label) DO UPDATE SET content = excluded.content, updated_at = CURRENT_TIMESTAMP
WHERE content IS NOT excluded.content`;
    try {
      await this.#client.run(upsert);
    } catch (error) {
      if (!isBlocksTableMissing(error)) throw error;
      // First write to this database: create the table (agents' exact schema) and write, as one group.
      await this.#client.batch([CREATE_TABLE, upsert]);
    }
  }

  #key(): string {
    if (this.#label === undefined) {
      throw new ContextError(
        "INVALID_CONFIG",
        "SqliteContextProvider has no label: pass one to the constructor or declare it as a block so init(label) fills it in",
      );
    }
    return rowLabel(this.#label, this.#namespace);
  }

  #labelOption(): { label: string } | undefined {
    return this.#label === undefined ? undefined : { label: this.#label };
  }
}
