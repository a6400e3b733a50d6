import {
  type BlockVersion,
  type BlockWrite,
  type ConditionalContextProvider,
  ContextError,
  SYSTEM_PROMPT_LABEL,
  type VersionQuery,
} from "@contextblocks/core";
import {
  checkRowLabel,
  clipped,
  describeValue,
  type FingerprintedPrompt,
  type FingerprintingPromptStore,
  type LabelCheckOptions,
  rowLabel,
  type SyncReadableProvider,
} from "@contextblocks/core/store-kit";
import { type SqlClient, type SqlRow, type SqlStatement, sql } from "@contextblocks/sql";
import {
  conditionalWrite,
  ensureHistorySchema,
  isMissingHistorySchema,
  missingHistoryError,
  readVersions,
  recordReturnedVersion,
  sourceText,
  toVersion,
  upsertWithVersion,
  versionRetention,
} from "./block-history.js";
import { checkNamespace, checkSqlLabel, labelChecks } from "./names.js";
import {
  ensureFingerprintColumn,
  isMissingFingerprintColumn,
  SELECT_WITH_FINGERPRINT_PARTS,
  upsertWithFingerprint,
} from "./prompt-fingerprint.js";
import { type BlockStoreOptions, blockStoreOptions, ownerOf } from "./provider-options.js";
import { RECENT_BATCH, RECENT_CONTENT_LIMIT, writeWithRecent } from "./recent-versions.js";
import { BLOCKS_TABLE, TableAccess } from "./tables.js";
import { checkRowSize, checkStorable } from "./text-checks.js";

/** Options of `SqlContextProvider`: those of every block store, and the name its errors begin with. */
export interface SqlContextProviderOptions extends BlockStoreOptions {
  /** The class name errors begin with (`SqliteContextProvider`, `PostgresContextProvider`). */
  owner?: string | undefined;
  /**
   * Versions (the `versions` capability). On by default, keeping the last 50; `{ retention }` keeps the
   * last `retention`; `false` turns it off. With versions a changed write writes one row (the block's row
   * also holds its newest versions, recent-versions.ts) and every 16 versions one more, reading a constant
   * number of rows; without, one row, as `agents/context`'s.
   */
  versions?: boolean | { retention?: number } | undefined;
}

/** The rows of a read that found no table. */
const NO_ROWS: readonly { content: unknown }[] = Object.freeze([]);

/** The template parts of `get`'s statement, `SELECT content … WHERE label = ?`. */
const SELECT_PARTS = sql`SELECT content FROM cf_agents_context_blocks WHERE label = ${""}`.strings;

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

/** The options a store was made with, checked, and its way to the table: shared by stores made alike. */
interface ProviderSettings {
  readonly access: TableAccess;
  /** The label checks of this owner and dialect, so a store made with these settings looks up none. */
  readonly labelChecks: LabelCheckOptions;
  readonly namespace: string | undefined;
  readonly owner: string;
  readonly retention: number | undefined;
  readonly versionsChosen: boolean;
}

/**
 * Settings of stores made with the default options, by client and owner. A cold start constructs a store
 * per block, usually all alike (`new SqliteContextProvider(this, label)`): they share one checked settings
 * object instead of each checking and keeping its own. Stores given a namespace, `versions` or
 * `createTables` get their own (a key built from those would cost more than it saves).
 */
const sharedSettings = new WeakMap<SqlClient, ProviderSettings[]>();

function providerSettings(
  client: SqlClient,
  options: SqlContextProviderOptions,
  owner: string,
): ProviderSettings {
  const { namespace, versions, createTables } = options;
  if (namespace === undefined && versions === undefined && createTables === undefined) {
    return defaultSettings(client, owner);
  }
  return checkedSettings(client, namespace, versions, createTables, owner);
}

/** The settings of stores made on `client` with the default options, shared (see `sharedSettings`). */
function defaultSettings(client: SqlClient, owner: string): ProviderSettings {
  // A short list per client, one entry per store class (owner) made on it: scanned, not hashed, by index (a
  // `for…of` makes an iterator per store, which costs most while the code runs unoptimized after a collection).
  let byOwner = sharedSettings.get(client);
  if (byOwner !== undefined) {
    for (let at = 0; at < byOwner.length; at += 1) {
      const settings = byOwner[at] as ProviderSettings;
      if (settings.owner === owner) return settings;
    }
  } else {
    byOwner = [];
    sharedSettings.set(client, byOwner);
  }
  const settings = checkedSettings(client, undefined, undefined, undefined, owner);
  byOwner.push(settings);
  return settings;
}

function checkedSettings(
  client: SqlClient,
  namespace: string | undefined,
  versions: SqlContextProviderOptions["versions"],
  createTables: boolean | undefined,
  owner: string,
): ProviderSettings {
  return {
    access: new TableAccess(client, BLOCKS_TABLE, createTables ?? true, owner),
    labelChecks: labelChecks(owner, client.dialect),
    namespace: checkNamespace(namespace, owner, client.dialect),
    owner,
    retention: versionRetention(versions, owner),
    versionsChosen: versions !== undefined,
  };
}

/**
 * A writable context block stored as one row of `cf_agents_context_blocks` (the table `agents/context`
 * uses) on any `SqlClient`, SQLite or Postgres. The row's label is the block's label, or with a namespace
 * `U+001F + JSON.stringify([namespace, label])` (see `rowLabel`). Also the store of a frozen prompt.
 *
 * `get` is one statement and reads one row; a missing table reads as no content and creates nothing. `set`
 * is one upsert that writes nothing when the content is unchanged; the first write creates the table (only
 * this one).
 */
export class SqlContextProvider
  implements ConditionalContextProvider, SyncReadableProvider, FingerprintingPromptStore
{
  /** What stores made with the same options share (one object per client and options, not per block). */
  readonly #settings: ProviderSettings;
  #label: string | undefined;
  /** The length of the row's array of recent versions after this store's last write (unknown before). */
  #recentCount: number | undefined;
  #selectStatement: SqlStatement | undefined;
  /** `versions`'s function, made on first read (a provider whose versions are never read allocates none). */
  #versionsRead: ((query?: VersionQuery) => Promise<BlockVersion[]>) | undefined;

  /** The class name errors begin with when no `owner` option is given: each backend's class sets its own. */
  protected static readonly storeName: string = "SqlContextProvider";

  constructor(client: SqlClient, labelOrOptions?: string | SqlContextProviderOptions) {
    const storeName = (new.target as typeof SqlContextProvider).storeName;
    if (typeof labelOrOptions === "string") {
      // `agents/context`'s form, one store per block on a wake: no options object to make or read.
      const settings = defaultSettings(client, storeName);
      this.#settings = settings;
      this.#label = checkRowLabel(labelOrOptions, undefined, settings.labelChecks);
      return;
    }
    const owner = ownerOf(labelOrOptions, storeName);
    const options = blockStoreOptions(labelOrOptions, owner);
    this.#settings = providerSettings(client, options, owner);
    this.#label =
      options.label === undefined
        ? undefined
        : checkRowLabel(options.label, this.#settings.namespace, this.#settings.labelChecks);
  }

  get #access(): TableAccess {
    return this.#settings.access;
  }

  get #namespace(): string | undefined {
    return this.#settings.namespace;
  }

  get #owner(): string {
    return this.#settings.owner;
  }

  get #retention(): number | undefined {
    return this.#settings.retention;
  }

  get #versionsChosen(): boolean {
    return this.#settings.versionsChosen;
  }

  /**
   * The kept versions, newest first (`ContextBlocks.blockVersions`); a function only when versions are kept, so
   * `ContextBlocks` (`isVersionedProvider`) and the conformance suite recognise the capability by shape. The
   * same function on every read.
   */
  get versions(): ((query?: VersionQuery) => Promise<BlockVersion[]>) | undefined {
    if (this.#retention === undefined) return undefined;
    this.#versionsRead ??= (query) => this.#versions(query ?? {});
    return this.#versionsRead;
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
      this.#label = checkSqlLabel(label, this.#namespace, this.#owner, this.#access.client.dialect);
    }
  }

  /** The block's content, or `null` when it has none (no row, or no table yet). One row read on a hit. */
  async get(): Promise<string | null> {
    const select = this.#select();
    // `TableAccess.read` written out: no closure per read on the prompt path (a cold freeze is one `get`).
    let rows: readonly { content: unknown }[];
    try {
      rows = await this.#access.client.run<{ content: unknown }>(select);
    } catch (error) {
      rows = this.#access.readFailed(error, NO_ROWS);
    }
    return this.#contentOf(rows);
  }

  /**
   * `get`, answered synchronously when the client runs statements synchronously (better-sqlite3, a Durable
   * Object's `ctx.storage.sql`: `SqlClient.runSync`); `undefined` on other clients. `ContextBlocks` reads
   * through it when it can, so a cold start serves the stored prompt without a chain of promises.
   */
  getSync(): string | null | undefined {
    const client = this.#access.client;
    if (client.runSync === undefined) return undefined;
    const select = this.#select();
    let rows: readonly { content: unknown }[];
    try {
      rows = client.runSync<{ content: unknown }>(select);
    } catch (error) {
      rows = this.#access.readFailed(error, NO_ROWS);
    }
    return this.#contentOf(rows);
  }

  /**
   * The content with the configuration fingerprint stored with it (`prompt_fingerprint`, written only on the
   * frozen prompt's row): one statement, one row read, answered synchronously when the client can. A table
   * without the column (created by `agents/context` or an earlier release) reads as no fingerprint.
   */
  getWithFingerprint(): FingerprintedPrompt | null | Promise<FingerprintedPrompt | null> {
    const client = this.#access.client;
    const select: SqlStatement = { strings: SELECT_WITH_FINGERPRINT_PARTS, values: [this.#key()] };
    if (client.runSync !== undefined) {
      let rows: readonly { content: unknown; prompt_fingerprint?: unknown }[];
      try {
        rows = client.runSync<{ content: unknown; prompt_fingerprint?: unknown }>(select);
      } catch (error) {
        if (!isMissingFingerprintColumn(error, client.dialect))
          rows = this.#access.readFailed(error, NO_ROWS);
        else return this.#withoutFingerprint(this.getSync());
      }
      return this.#recordOf(rows);
    }
    return client.run<{ content: unknown; prompt_fingerprint?: unknown }>(select).then(
      (rows) => this.#recordOf(rows),
      (error: unknown) => {
        if (isMissingFingerprintColumn(error, client.dialect))
          return this.get().then(this.#withoutFingerprint);
        return this.#recordOf(this.#access.readFailed(error, NO_ROWS));
      },
    );
  }

  #withoutFingerprint(content: string | null | undefined): FingerprintedPrompt | null {
    return content === null || content === undefined ? null : { content, fingerprint: null };
  }

  #recordOf(rows: readonly { content: unknown; prompt_fingerprint?: unknown }[]): FingerprintedPrompt | null {
    const content = this.#contentOf(rows);
    if (content === null) return null;
    const fingerprint = rows[0]?.prompt_fingerprint;
    // A store that keeps versions of the prompt writes it without the fingerprint: none is trusted then.
    const trusted = typeof fingerprint === "string" && this.#keptVersions() === undefined;
    return { content, fingerprint: trusted ? fingerprint : null };
  }

  #contentOf(rows: readonly { content: unknown }[]): string | null {
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
  async set(content: string, write?: BlockWrite): Promise<void> {
    const key = this.#key();
    this.#checkContent(content, "content");
    checkRowSize([key, content], `content of "${clipped(String(this.#label))}"`, this.#owner, this.#label);
    const dialect = this.#access.client.dialect;
    const retention = this.#keptVersions();
    if (retention === undefined) {
      if (write?.fingerprint !== undefined || this.#label === SYSTEM_PROMPT_LABEL) {
        await this.#writePrompt(key, content, write?.fingerprint ?? null);
      } else {
        await this.#access.write([UPSERT[dialect](key, content)]);
      }
      return;
    }
    const atomic = this.#access.client.atomic;
    const source = sourceText(write);
    if (this.#keepsRecent(content)) {
      await this.#writeRecent(key, content, undefined, source, retention);
      return;
    }
    const results = await this.#writeWithVersions(
      upsertWithVersion(dialect, key, content, source, retention, atomic),
    );
    await this.#recordReturned(results, source, retention);
  }

  /**
   * Whether a write keeps its version in the block's own row (recent-versions.ts): on clients that run a
   * group atomically, for content up to `RECENT_CONTENT_LIMIT`. Other writes keep it in its own slot.
   */
  #keepsRecent(content: string): boolean {
    const client = this.#access.client;
    return (client.atomic || client.dialect === "postgres") && content.length <= RECENT_CONTENT_LIMIT;
  }

  /**
   * A write whose version goes into the row: one row written, plus one batch every `RECENT_BATCH` writes.
   * The flush runs with the write when the array is known to be full, or not known (this store's first
   * write: it then reads the row once more); `false` when the write did not happen.
   */
  async #writeRecent(
    key: string,
    content: string,
    expected: string | undefined,
    source: string,
    retention: number,
  ): Promise<boolean> {
    const client = this.#access.client;
    const known = this.#recentCount;
    const flush = known === undefined || known >= RECENT_BATCH;
    const { statements, applied, flushed } = writeWithRecent(
      client.dialect,
      key,
      content,
      expected,
      source,
      retention,
      flush,
    );
    const results = await this.#writeWithVersions(statements);
    if (client.dialect === "postgres") return results[applied]?.[0] !== undefined;
    // Counted here rather than returned (`RETURNING` reads a row more on a Durable Object). After a flush
    // that found the array short of a batch the count starts at 0 all the same: it may then be low, so the
    // array can reach almost two batches before this store moves it out, never more (another store writing
    // the same row adds its own writes, and moves them out as well).
    if (flushed !== undefined) this.#recentCount = 0;
    const wrote = Number(results[applied]?.[0]?.applied ?? 0) > 0;
    if (wrote && this.#recentCount !== undefined) this.#recentCount += 1;
    return wrote;
  }

  /**
   * The frozen prompt's write: its row with the configuration's fingerprint (`null` clears the one stored),
   * one row written. The column is added to a table created without it; where tables may not be created
   * (`createTables: false`) the prompt is written without it (a wake then runs the full header check).
   */
  async #writePrompt(key: string, content: string, fingerprint: string | null): Promise<void> {
    const client = this.#access.client;
    const statement = upsertWithFingerprint(client.dialect, key, content, fingerprint);
    try {
      await this.#access.write([statement]);
    } catch (error) {
      if (!isMissingFingerprintColumn(error, client.dialect)) throw error;
      if (!this.#access.createTables) {
        await this.#access.write([UPSERT[client.dialect](key, content)]);
        return;
      }
      await ensureFingerprintColumn(client);
      await this.#access.write([statement]);
    }
  }

  /**
   * SQLite without atomic groups: the version of a write that changed the row, recorded from the row its own
   * statement returned (a statement of another writer may have run since).
   */
  async #recordReturned(results: SqlRow[][], source: string, retention: number): Promise<void> {
    const client = this.#access.client;
    const row = results[0]?.[0];
    if (client.dialect !== "sqlite" || client.atomic || row === undefined) return;
    await this.#writeWithVersions([recordReturnedVersion(row, source, retention)]);
  }

  /**
   * The versions a write keeps. The frozen prompt is not a block: a store holding it (`"_system_prompt"`,
   * given or passed to `init` by `ContextBlocks`) keeps none unless `versions` was asked for, so a freeze
   * writes one row, as `agents/context`'s prompt store does.
   */
  #keptVersions(): number | undefined {
    if (this.#label === SYSTEM_PROMPT_LABEL && !this.#versionsChosen) return undefined;
    return this.#retention;
  }

  /**
   * Writes `content` only while the row still holds `expected` (no row counts as `""`), in one transaction
   * with its version; `false` when another writer changed the block first (`ContextBlocks` then edits the
   * new text again). Shared blocks (one row read by several agents) stay consistent this way.
   */
  async setIf(expected: string, content: string, write?: BlockWrite): Promise<boolean> {
    const key = this.#key();
    this.#checkContent(expected, "expected");
    this.#checkContent(content, "content");
    checkRowSize([key, content], `content of "${clipped(String(this.#label))}"`, this.#owner, this.#label);
    if (expected === content) return ((await this.get()) ?? "") === expected;
    const dialect = this.#access.client.dialect;
    const retention = this.#keptVersions();
    const versioning = retention === undefined ? undefined : { source: sourceText(write), retention };
    if (versioning !== undefined && this.#keepsRecent(content)) {
      return this.#writeRecent(key, content, expected, versioning.source, versioning.retention);
    }
    const atomic = this.#access.client.atomic;
    const { statements, applied } = conditionalWrite(dialect, key, expected, content, versioning, atomic);
    const results =
      versioning === undefined
        ? await this.#access.write(statements)
        : await this.#writeWithVersions(statements);
    if (dialect === "postgres" || atomic) return Number(results[applied]?.[0]?.applied ?? 0) > 0;
    if (results[applied]?.[0] === undefined) return false;
    if (versioning !== undefined)
      await this.#recordReturned(results, versioning.source, versioning.retention);
    return true;
  }

  /**
   * A write that touches the block's row and its versions: when a part of the schema is missing (a fresh
   * database, a table created before versions were kept, an `agents` database), it is created or added first
   * (idempotently) and the write runs again.
   */
  async #writeWithVersions(statements: readonly SqlStatement[]): Promise<SqlRow[][]> {
    const client = this.#access.client;
    try {
      return await client.batch(statements);
    } catch (error) {
      if (!isMissingHistorySchema(error, client.dialect)) throw error;
      if (!this.#access.createTables) throw missingHistoryError(this.#owner, error);
      await ensureHistorySchema(client);
      return client.batch(statements);
    }
  }

  async #versions(query: VersionQuery): Promise<BlockVersion[]> {
    const retention = this.#retention;
    if (retention === undefined) return [];
    const key = this.#key();
    const client = this.#access.client;
    let rows: Awaited<ReturnType<typeof readVersions>>;
    try {
      rows = await readVersions(client, key, retention, query);
    } catch (error) {
      // Nothing written with versions yet: no versions (a read creates nothing).
      if (!isMissingHistorySchema(error, client.dialect)) throw error;
      if (!this.#access.createTables) throw missingHistoryError(this.#owner, error);
      return [];
    }
    return rows.map((row) => toVersion(row, this.#owner));
  }

  #checkContent(content: unknown, field: string): asserts content is string {
    if (typeof content !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${this.#owner}.set: ${field} of "${this.#label}" must be a string, got ${describeValue(content)}`,
        this.#labelOption(),
      );
    }
    checkStorable(content, field, this.#owner, this.#access.client.dialect, "INVALID_INPUT", this.#label);
  }

  /** The statement `get` runs, built once per row label. */
  #select(): SqlStatement {
    const key = this.#key();
    let select = this.#selectStatement;
    if (select === undefined || select.values[0] !== key) {
      // Written out rather than through the `sql` tag (which checks and freezes): a cold start builds one
      // per store. The template's own parts, so clients find the statement text they cached for it.
      select = { strings: SELECT_PARTS, values: [key] };
      this.#selectStatement = select;
    }
    return select;
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
