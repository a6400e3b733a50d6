import { ContextError, type SearchProvider } from "@contextblocks/core";
import {
  checkNamespace,
  checkStoredLabel,
  describeValue,
  type LabelCheckOptions,
  loneSurrogateProblem,
} from "@contextblocks/core/store-kit";
import { type SqlClient, type SqlSource, type StatementObserver, sql } from "@contextblocks/sql";
import {
  isMissingTableError,
  isReadOnlyRefusal,
  raw,
  rowTooLarge,
  toSqliteClient,
} from "@contextblocks/sql/store-kit";
import { searchableText } from "@contextblocks/text";
import { keyHandle } from "./handle.js";
import { openLayout } from "./layout.js";
import { importLegacyEntries, storedKey } from "./migrate.js";
import {
  indexCopyTable,
  indexTable,
  layoutVersion,
  layoutView,
  legacyTable,
  scopesTable,
  writesView,
} from "./schema.js";
import { ScopeShare } from "./scope-share.js";
import { runSearch, type SearchSort } from "./search.js";

/** Options of `Fts5SearchProvider`. */
export interface Fts5SearchProviderOptions {
  /** The block's label. Omitted: `init(label)` fills it in from the block declaration. */
  label?: string | undefined;
  /**
   * Keeps entries of one label apart per tenant or session sharing a database: a non-empty string, or
   * omitted for none (the same rule as `SqliteContextProvider`). Entries written by `agents/context` are
   * imported only into the scope without a namespace.
   */
  namespace?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /** How many matches `search` returns at most. Default 10. */
  limit?: number;
  /**
   * Who sorts a search's matches; both return the same results in the same order. `"rank"`: FTS5 sorts them
   * (`ORDER BY rank`) and hands over only the first `limit`, so a search reads about `limit` rows at any
   * index size (a Durable Object bills rows read). `"bm25"`: SQLite sorts them by a `bm25()` expression,
   * about a quarter faster at 20k entries, but every match is a row read. Default: `"bm25"` where the client
   * says rows read are not billed (`billsRows: false`, as better-sqlite3's client does), `"rank"`
   * otherwise (a Durable Object, an Agent, or a client that does not say).
   */
  sort?: "rank" | "bm25" | undefined;
  /**
   * Whether a query also matches words of the keys (weighted twice a content word). Default `true`: keys made
   * by `set_context` are slugs of the entry's title, and a title is the best summary of an entry.
   */
  searchKeys?: boolean;
  /**
   * Estimated tokens one result may take. A longer entry comes back as an excerpt around the words that
   * matched (`…` where it was cut); searching for its key returns it whole. Default 40 (an excerpt of about 24 words).
   */
  resultTokens?: number;
  /** Estimated tokens all results of one `search` may take together (the best one always comes back). Default 400. */
  searchTokens?: number;
  /**
   * A result whose bm25 score is below this share of the best result's (0 to 1) is a weak match: it comes
   * back as its key and a short excerpt (`weakResultTokens`), or as its key alone, `[key]` without text. The
   * reader sees that it exists, and searching the key returns it whole. A question then costs the full
   * excerpts of its strong matches only, and no match is dropped. 0 treats every result as strong.
   * Default 0.9 (with `weakResultTokens` 6: on LoCoMo, the same hit@10 as full excerpts for every result, the
   * answering turn always with some of its text, at fewer tokens than 0.5 with keys alone).
   */
  keyOnlyBelow?: number;
  /**
   * Estimated tokens of text a weak match (below `keyOnlyBelow`) keeps: a short excerpt around its matched
   * words after its key, so the reader can tell whether the entry is worth searching its key. 0 returns its
   * key alone. An integer from 0 to `resultTokens`. Default 6 (about four words).
   */
  weakResultTokens?: number;
  /**
   * A result whose bm25 score is below this share of the best result's (0 to 1) is left out. Default 0 (none:
   * on LoCoMo every cut-off tried lost answers, 0.02 to 0.12 of hit@10).
   */
  dropBelow?: number;
}

/** The third argument of `Fts5SearchProvider.set`. */
export interface Fts5EntryOptions {
  /**
   * Text a reader would find the entry by that is not part of it: for a chunk of a longer document, the
   * document's title and the chunk's section headings (the idea of Anthropic's "contextual retrieval").
   * Searched at 0.3 the weight of the content, never returned, and not counted by `resultTokens`.
   */
  context?: string | undefined;
}

const defaultLimit = 10;
const defaultResultTokens = 40;
const defaultSearchTokens = 400;
const defaultKeyOnlyBelow = 0.9;
const defaultWeakResultTokens = 6;

/**
 * A searchable context block on SQLite FTS5: keyed entries, natural-language queries, and writes and counts
 * whose row cost does not grow with the index. Works on a Durable Object's `ctx.storage`, on anything with a
 * tagged-template `sql` method (an `agents` Agent: `new AgentSearchProvider(this)`), on a better-sqlite3
 * `Database`, or on a `SqlClient` from `@contextblocks/sql`.
 *
 * - `get()`: `"N entries indexed."`, or `null` when the label has no entries.
 * - `search(query)`: the best matches as `[key]` + newline + content (an excerpt around the matched words
 *   when the entry is longer than `resultTokens`), separated by blank lines, or `null`. A query that is
 *   exactly a key (`c-tips` or `[c-tips]`) brings that entry first and whole.
 * - `set(key, content, { context })`: adds or replaces one entry; its optional context (a document chunk's
 *   title and section) is searched at a lower weight and never returned. `delete(key)`: removes one.
 */
export class Fts5SearchProvider implements SearchProvider {
  readonly #client: SqlClient;
  readonly #namespace: string;
  readonly #limit: number;
  readonly #sort: SearchSort;
  readonly #searchKeys: boolean;
  readonly #resultTokens: number;
  readonly #searchTokens: number;
  readonly #keyOnlyBelow: number;
  readonly #weakResultTokens: number;
  readonly #dropBelow: number;
  #label: string | undefined;
  /** The label's scope id, resolved once per label (schema, scope row and legacy import on first use). */
  #scope: Promise<number> | undefined;
  #scopeShare: ScopeShare | undefined;

  constructor(source: SqlSource, options: Fts5SearchProviderOptions | string = {}) {
    const settings: Fts5SearchProviderOptions = typeof options === "string" ? { label: options } : options;
    if (typeof settings !== "object" || settings === null) {
      throw invalidConfig(`options must be an object or a label string, got ${describeValue(settings)}`);
    }
    const {
      label,
      namespace,
      limit = defaultLimit,
      searchKeys = true,
      resultTokens = defaultResultTokens,
      searchTokens = defaultSearchTokens,
      keyOnlyBelow = defaultKeyOnlyBelow,
      weakResultTokens = defaultWeakResultTokens,
      dropBelow = 0,
      sort,
      onStatement,
    } = settings;
    if (label !== undefined) checkStoredLabel(label, checks);
    checkNamespace(namespace, checks);
    if (!Number.isInteger(limit) || limit < 1) {
      throw invalidConfig(`limit must be a positive integer, got ${describeValue(limit)}`);
    }
    if (sort !== undefined && sort !== "rank" && sort !== "bm25") {
      throw invalidConfig(`sort must be "rank" or "bm25", got ${describeValue(sort)}`);
    }
    if (typeof searchKeys !== "boolean") {
      throw invalidConfig(`searchKeys must be a boolean, got ${describeValue(searchKeys)}`);
    }
    for (const [name, value] of [
      ["resultTokens", resultTokens],
      ["searchTokens", searchTokens],
    ] as const) {
      if (!Number.isInteger(value) || value < 16) {
        throw invalidConfig(`${name} must be an integer of at least 16, got ${describeValue(value)}`);
      }
    }
    for (const [name, value] of [
      ["keyOnlyBelow", keyOnlyBelow],
      ["dropBelow", dropBelow],
    ] as const) {
      if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
        throw invalidConfig(`${name} must be a number from 0 to 1, got ${describeValue(value)}`);
      }
    }
    if (!Number.isInteger(weakResultTokens) || weakResultTokens < 0 || weakResultTokens > resultTokens) {
      throw invalidConfig(
        `weakResultTokens must be an integer from 0 to resultTokens (${resultTokens}), got ${describeValue(weakResultTokens)}`,
      );
    }
    this.#keyOnlyBelow = keyOnlyBelow;
    this.#weakResultTokens = weakResultTokens;
    this.#dropBelow = dropBelow;
    this.#resultTokens = resultTokens;
    this.#searchTokens = searchTokens;
    this.#client = toSqliteClient(source, { onStatement });
    this.#sort = sort ?? (this.#client.billsRows === false ? "bm25" : "rank");
    this.#searchKeys = searchKeys;
    // Stored scopes keep "no namespace" as the empty string, which no caller can pass.
    this.#namespace = namespace ?? "";
    this.#limit = limit;
    this.#label = label;
  }

  /** The block label, once given (by the options or by `init`). */
  get label(): string | undefined {
    return this.#label;
  }

  /** The namespace entries are kept in, or `undefined` when none was given (as `SqliteContextProvider`). */
  get namespace(): string | undefined {
    return this.#namespace === "" ? undefined : this.#namespace;
  }

  /** Who sorts this provider's search matches (the `sort` option, or its default for the client). */
  get sort(): "rank" | "bm25" {
    return this.#sort;
  }

  /** Called by `ContextBlocks` with the block's label before first use. */
  init(label: string): void {
    checkStoredLabel(label, checks);
    if (label !== this.#label) this.#scope = undefined;
    this.#label = label;
  }

  async get(): Promise<string | null> {
    const scope = await this.#scopeToRead();
    if (scope === undefined) return null;
    const rows = await this.#client.run<{ entries: number }>(
      sql`SELECT entries FROM ${raw(scopesTable)} WHERE id = ${scope}`,
    );
    const entries = Number(rows[0]?.entries ?? 0);
    return entries > 0 ? `${entries} entries indexed.` : null;
  }

  async search(query: string): Promise<string | null> {
    if (typeof query !== "string") {
      throw this.#invalidInput(`search: query must be a string, got ${describeValue(query)}`);
    }
    const scope = await this.#scopeToRead();
    if (scope === undefined) return null;
    if (this.#scopeShare?.scope !== scope) this.#scopeShare = new ScopeShare(this.#client, scope);
    const share = this.#scopeShare;
    const matches = await runSearch(this.#client, scope, query, {
      placement: await share.placement(),
      notAlone: () => share.notAlone(),
      limit: this.#limit,
      sort: this.#sort,
      searchKeys: this.#searchKeys,
      resultTokens: this.#resultTokens,
      searchTokens: this.#searchTokens,
      keyOnlyBelow: this.#keyOnlyBelow,
      weakResultTokens: this.#weakResultTokens,
      dropBelow: this.#dropBelow,
    });
    if (matches.length === 0) return null;
    return matches
      .map((match) => (match.text === null ? `[${match.key}]` : `[${match.key}]\n${match.text}`))
      .join("\n\n");
  }

  /**
   * Adds or replaces the entry of `key`. `options.context`: text a reader would find the entry by that is not
   * part of it (for a chunk of a longer document: its title and section headings). It is searched at a lower
   * weight than the content and never returned; a later `set` of the key without it removes it.
   */
  async set(key: string, content: string, options?: Fts5EntryOptions | string): Promise<void> {
    if (typeof key !== "string")
      throw this.#invalidInput(`set: key must be a string, got ${describeValue(key)}`);
    if (typeof content !== "string") {
      throw this.#invalidInput(`set: content must be a string, got ${describeValue(content)}`);
    }
    if (
      options !== undefined &&
      typeof options !== "string" &&
      (typeof options !== "object" || options === null)
    ) {
      throw this.#invalidInput(`set: options must be an object, got ${describeValue(options)}`);
    }
    // A string is the description \`ContextBlocks.setEntry\` passes to every keyed provider: not kept here.
    const context = typeof options === "object" ? options.context : undefined;
    if (context !== undefined && typeof context !== "string") {
      throw this.#invalidInput(`set: options.context must be a string, got ${describeValue(context)}`);
    }
    checkStorable(key, "set: key", (message) => this.#invalidInput(message));
    checkStorable(content, "set: content", (message) => this.#invalidInput(message));
    if (context !== undefined) {
      checkStorable(context, "set: options.context", (message) => this.#invalidInput(message));
    }
    // Refused on every SQLite, so an index built on Node also fits in a Durable Object (which refuses such
    // a row with a bare SQLITE_TOOBIG).
    // Content and context are indexed with the words they hold in a compatibility form ("ｔｉｄｅ", "ti\u00adde")
    // after them, so the plain word finds them (`searchableText`; a search returns the content as written).
    const storedContent = searchableText(content);
    const storedContext = context === undefined || context.length === 0 ? null : searchableText(context);
    const tooLarge = rowTooLarge([key, storedContent, storedContext ?? ""]);
    if (tooLarge !== undefined) {
      throw this.#invalidInput(
        `set: entry "${key.slice(0, 80)}" (key, content and context) ${tooLarge}: split it into several entries, e.g. by section`,
      );
    }
    const scope = await this.#openScope();
    const stored = await storedKey(this.#client, scope, key);
    // An empty context is stored as none: it would match nothing and only make two equal entries differ.
    await this.#client.run(sql`INSERT INTO ${raw(writesView)} (operation, scope, handle, key, content, context)
      VALUES ('set', ${scope}, ${keyHandle(scope, stored)}, ${stored}, ${storedContent}, ${storedContext})`);
  }

  async delete(key: string): Promise<void> {
    if (typeof key !== "string") {
      throw this.#invalidInput(`delete: key must be a string, got ${describeValue(key)}`);
    }
    checkStorable(key, "delete: key", (message) => this.#invalidInput(message));
    const scope = await this.#openScope();
    const stored = await storedKey(this.#client, scope, key);
    await this.#client.run(sql`INSERT INTO ${raw(writesView)} (operation, scope, handle, key, content, context)
      VALUES ('delete', ${scope}, ${keyHandle(scope, stored)}, ${stored}, NULL, NULL)`);
  }

  /** The scope's id, the layout and the scope made on first use; `first`: what a read already found of it. */
  #openScope(first?: ScopeLookup): Promise<number> {
    const label = this.#label;
    if (label === undefined) {
      return Promise.reject(
        invalidConfig("no label: pass { label } to the constructor or call init(label) before use"),
      );
    }
    if (this.#scope === undefined) {
      const opening = resolveScope(this.#client, this.#namespace, label, first);
      this.#scope = opening;
      // A failed open (storage unavailable) is retried by the next call instead of being remembered.
      opening.catch(() => {
        if (this.#scope === opening) this.#scope = undefined;
      });
    }
    return this.#scope;
  }

  /**
   * The scope a read looks in: `#openScope`'s, or `undefined` when there is nothing to read and nothing to bring
   * over (no storage layout yet, or no scope for this label, and neither an index of an earlier layout nor
   * `agents/context`'s entries to copy): a read then finds nothing and creates nothing; the first write does.
   */
  async #scopeToRead(): Promise<number | undefined> {
    const label = this.#label;
    if (this.#scope !== undefined || label === undefined) return this.#openScope();
    const found = await scopeIfLaidOut(this.#client, this.#namespace, label);
    if (found !== "no layout" && found?.imported === true) {
      this.#scope = Promise.resolve(found.id);
      return found.id;
    }
    if (found === "no layout" || found === undefined) {
      const tables = new Set(
        (
          await this.#client.query<{ name: string }>`SELECT name FROM sqlite_master
            WHERE type = 'table' AND name IN (${indexTable}, ${indexCopyTable}, ${legacyTable})`
        ).map((row) => row.name),
      );
      // agents/context's entries are copied into the scope of no namespace only (`resolveScope`).
      const toCopy = this.#namespace === "" && tables.has(legacyTable);
      const earlierIndex = found === "no layout" && (tables.has(indexTable) || tables.has(indexCopyTable));
      if (!toCopy && !earlierIndex) return undefined;
    }
    try {
      return await this.#openScope(found);
    } catch (error) {
      if (!isReadOnlyRefusal(error)) throw error;
      // The entries to read must first be brought over (a write), which a reader cannot do.
      throw new ContextError(
        "READONLY",
        `Fts5SearchProvider "${label}": this database only reads, and the entries of an earlier layout of this provider or of agents/context must first be brought into this provider's tables: open it writable once`,
        { cause: error, label },
      );
    }
  }

  #invalidInput(message: string): ContextError {
    const label = this.#label;
    return new ContextError("INVALID_INPUT", `Fts5SearchProvider${label ? ` "${label}"` : ""} ${message}`, {
      ...(label === undefined ? {} : { label }),
    });
  }
}

/**
 * The id of the (namespace, label) scope: found with one row read; on the first use in a database the schema
 * is created, and on the first use of a label its scope row is added and `agents/context` entries imported.
 */
async function resolveScope(
  client: SqlClient,
  namespace: string,
  label: string,
  first?: ScopeLookup,
): Promise<number> {
  let scope = await findScope(client, namespace, label, first);
  if (scope === undefined) {
    await client.run(sql`INSERT INTO ${raw(scopesTable)} (namespace, label, legacy_imported)
      VALUES (${namespace}, ${label}, ${namespace === "" ? 0 : 1}) ON CONFLICT (namespace, label) DO NOTHING`);
    scope = await findScope(client, namespace, label);
    if (scope === undefined) throw new Error(`Fts5SearchProvider: could not create the scope of "${label}"`);
  }
  if (!scope.imported) await importLegacyEntries(client, scope.id, label);
  return scope.id;
}

async function findScope(
  client: SqlClient,
  namespace: string,
  label: string,
  first?: ScopeLookup,
): Promise<{ id: number; imported: boolean } | undefined> {
  const found = first ?? (await scopeIfLaidOut(client, namespace, label));
  if (found !== "no layout") return found;
  // No layout view: a new database, or one of an earlier layout (layout.ts).
  await openLayout(client);
  const laidOut = await scopeIfLaidOut(client, namespace, label);
  return laidOut === "no layout" ? undefined : laidOut;
}

/** A scope as one read finds it: its row, none (`undefined`), or `"no layout"` where this layout is not in place. */
type ScopeLookup = { id: number; imported: boolean } | undefined | "no layout";

/** The (namespace, label) scope where this layout is in place: one row read. */
async function scopeIfLaidOut(client: SqlClient, namespace: string, label: string): Promise<ScopeLookup> {
  // The layout view holds no rows to read: naming it makes the statement fail until the layout exists.
  const select = sql`SELECT scope.id, scope.legacy_imported
    FROM ${raw(scopesTable)} AS scope, ${raw(layoutView)} AS layout
    WHERE layout.version = ${layoutVersion} AND scope.namespace = ${namespace} AND scope.label = ${label}`;
  let rows: { id: number; legacy_imported: number }[];
  try {
    rows = await client.run(select);
  } catch (error) {
    if (!isMissingTableError(error)) throw error;
    return "no layout";
  }
  const row = rows[0];
  return row === undefined ? undefined : { id: Number(row.id), imported: Number(row.legacy_imported) === 1 };
}

/** SQLite keeps UTF-8: a lone UTF-16 surrogate would be stored as U+FFFD (two keys would become one). */
const unstorable = loneSurrogateProblem("SQLite");
const checks: LabelCheckOptions = { owner: "Fts5SearchProvider", unstorable };

/** Refuses text SQLite would change (a lone surrogate) before anything is written. */
function checkStorable(text: string, field: string, error: (message: string) => ContextError): void {
  const problem = unstorable(text);
  if (problem !== null) throw error(`${field} ${problem}`);
}

function invalidConfig(message: string): ContextError {
  return new ContextError("INVALID_CONFIG", `Fts5SearchProvider: ${message}`);
}
