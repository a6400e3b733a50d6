import { ContextError, type WritableContextProvider } from "@contextblocks/core";
import { type SqlClient, type StatementObserver, sql } from "@contextblocks/sql";
import { rowLabel } from "@contextblocks/sqlite";
import { type PostgresSource, postgresClient } from "./client.js";
import { checkLabel, checkNamespace } from "./names.js";
import { isUndefinedTable, missingTables, withTables } from "./schema.js";
import { checkStorable, kindOf } from "./text-checks.js";

const PROVIDER = "PostgresContextProvider";

/** Options of `PostgresContextProvider` (the object form of its second argument). */
export interface PostgresContextProviderOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /** Keeps this provider's rows apart from every other namespace's and from plain rows (as in sqlite). */
  namespace?: string | undefined;
  /** Create the tables on first use when they are missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * A writable context block stored as one row of `cf_agents_context_blocks` in Postgres (the table seed 004
 * names): also the store of the frozen prompt (`new ContextBlocks(configs, new PostgresContextProvider(client,
 * "_prompt"))`). Rows are keyed as in `@contextblocks/sqlite`: the label, or with a namespace
 * `U+001F + JSON.stringify([namespace, label])`.
 *
 * `get` is one statement; `set` is one upsert that writes nothing when the content is unchanged. Safe for
 * concurrent writers on several connections: the upsert is one atomic statement.
 *
 * ```ts
 * const client = new pg.Client({ connectionString: env.HYPERDRIVE.connectionString });
 * await client.connect();
 * new PostgresContextProvider(client, `memory_${sessionId}`); // the seed's form
 * new PostgresContextProvider(client, { label: "memory", namespace: "tenant-a" });
 * ```
 */
export class PostgresContextProvider implements WritableContextProvider {
  readonly #client: SqlClient;
  readonly #namespace: string | undefined;
  readonly #createTables: boolean;
  #label: string | undefined;

  constructor(source: PostgresSource, labelOrOptions?: string | PostgresContextProviderOptions) {
    const options: PostgresContextProviderOptions =
      typeof labelOrOptions === "string" ? { label: labelOrOptions } : (labelOrOptions ?? {});
    if (typeof options !== "object" || options === null) {
      throw invalidConfig(`the second argument must be a label or an options object, got ${kindOf(options)}`);
    }
    const { createTables = true } = options;
    if (typeof createTables !== "boolean") {
      throw invalidConfig(`createTables must be a boolean, got ${kindOf(createTables)}`);
    }
    this.#client = postgresClient(source, options.onStatement, PROVIDER);
    this.#createTables = createTables;
    this.#namespace = checkNamespace(options.namespace, PROVIDER);
    this.#label =
      options.label === undefined ? undefined : checkLabel(options.label, this.#namespace, PROVIDER);
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
    if (this.#label === undefined) this.#label = checkLabel(label, this.#namespace, PROVIDER);
  }

  /** The block's content, or `null` when it has none. One statement. */
  async get(): Promise<string | null> {
    const key = this.#key();
    const select = sql`SELECT content FROM cf_agents_context_blocks WHERE label = ${key}`;
    let rows: { content: unknown }[];
    try {
      rows = await this.#client.run<{ content: unknown }>(select);
    } catch (error) {
      if (!isUndefinedTable(error)) throw error;
      // No table yet reads as no content (a read creates nothing), unless tables are managed by hand.
      if (this.#createTables) return null;
      throw missingTables(PROVIDER, error);
    }
    const content = rows[0]?.content;
    if (content === undefined || content === null) return null;
    if (typeof content !== "string") {
      throw new ContextError(
        "PROVIDER_FAILED",
        `${PROVIDER}: the stored content of "${this.#label}" is ${kindOf(content)}, not text`,
        this.#labelOption(),
      );
    }
    return content;
  }

  /** Replaces the block's content (an upsert of its row); unchanged content writes nothing. */
  async set(content: string): Promise<void> {
    const key = this.#key();
    if (typeof content !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${PROVIDER}.set: content of "${this.#label}" must be a string, got ${kindOf(content)}`,
        this.#labelOption(),
      );
    }
    checkStorable(content, "content", PROVIDER, "INVALID_INPUT", this.#label);
    const upsert = sql`INSERT INTO cf_agents_context_blocks AS block (label, content) VALUES (${key}, ${content})
ON CONFLICT (label) DO UPDATE SET content = excluded.content, updated_at = NOW()
WHERE block.content IS DISTINCT FROM excluded.content`;
    await withTables(this.#client, this.#createTables, PROVIDER, () => this.#client.run(upsert));
  }

  #key(): string {
    if (this.#label === undefined) {
      throw invalidConfig(
        "no label: pass one to the constructor or declare it as a block so init(label) fills it in",
      );
    }
    return rowLabel(this.#label, this.#namespace);
  }

  #labelOption(): { label: string } | undefined {
    return this.#label === undefined ? undefined : { label: this.#label };
  }
}

function invalidConfig(message: string): ContextError {
  return new ContextError("INVALID_CONFIG", `${PROVIDER}: ${message}`);
}
