import { ContextError } from "@contextblocks/core";
import { clipped, describeValue } from "@contextblocks/core/store-kit";
import type { StoredCompaction } from "@contextblocks/sessions";
import type {
  AppendPlacement,
  AppendResult,
  MessageRecord,
  PathTotals,
  SearchRanking,
  SessionStoreV1,
  StoredSearchHit,
} from "@contextblocks/sessions/store-kit";
import { checkSearchLimit, searchRankingOf } from "@contextblocks/sessions/store-kit";
import {
  type SqlClient,
  type SqlSource,
  type SqlStatement,
  type StatementObserver,
  sql,
} from "@contextblocks/sql";
import { raw, rowBytesOver, rowTooLarge, toSqliteClient } from "@contextblocks/sql/store-kit";
import { writtenText } from "@contextblocks/text";
import { ChainAppend } from "./chain-append.js";
import { IndexedLayout } from "./indexed-layout.js";
import { KeyedLayout } from "./keyed-layout.js";
import { largestSeq, rememberKeyedTail, rememberUpdatedText, searchOrderBump } from "./keyed-tail.js";
import type { LayoutStrategy } from "./layout-strategy.js";
import { LeanLayout } from "./lean-layout.js";
import { rememberTail } from "./lean-tail.js";
import {
  catchUpMessageIndex,
  catchUpWhereWritable,
  countUnindexed,
  readContinuations,
} from "./message-index.js";
import { indexedJsonOf } from "./message-index-text.js";
import { continuationRows, sliceStoredMessage } from "./message-rows.js";
import {
  checkSearchQuery,
  hasContextColumn,
  indexMessageStatement,
  keyedRowUpdateStatement,
  refreshContextStatements,
  searchMessageIndex,
  searchSortOf,
} from "./message-search.js";
import { type PathRow, recordOf, storedBytes, wholeNumber } from "./path-row.js";
import { sessionTokensOf } from "./search-scores.js";
import { SerialQueue } from "./serial-queue.js";
import {
  forgetLayout,
  leanLayoutStill,
  type NewSessionLayout,
  type SessionLayout,
  schemaReady,
  schemaToRead,
} from "./session-schema.js";
import { SessionShare } from "./session-share.js";
import { runSteps } from "./sql-steps.js";
import { tombstoneStatement } from "./tombstones.js";

/** Options of `SqliteSessionStore`. */
export interface SqliteSessionStoreOptions {
  /** Keeps this session's messages apart from others in the same tables. Default `""`, as `agents`. */
  sessionId?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /**
   * Writes each message's search row on append, as agents@0.22.0's `agents/experimental/memory/session`
   * does, so that version's `searchMessages` finds what this store wrote on a shared database. Default
   * `false`: on the lean and indexed layouts every 8th append indexes the 8 before it in one batch, so a
   * search never catches up on more than that (the keyed layout writes each search row on append).
   */
  indexOnAppend?: boolean | undefined;
  /**
   * The layout given to a database that has no session tables yet (a database that has them keeps its
   * own): `"keyed"` (an append writes 2 billed rows on a Durable Object, search row included) or `"lean"`
   * (no search row on append: faster where rows are not billed; agents@0.22.0 can still read and write it).
   * Default: keyed where the client bills rows (a Durable Object, or a client that does not say), lean
   * where it says it does not (better-sqlite3).
   */
  newDatabaseLayout?: NewSessionLayout | undefined;
  /**
   * The weights of `search`'s ranking over `defaultSearchRanking` (`@contextblocks/sessions/store-kit`), for
   * a benchmark choosing them on conversations of its own. Most applications leave it out.
   */
  searchRanking?: Partial<SearchRanking> | undefined;
}

/**
 * The longest session id a store writes rows for, in UTF-8 bytes. A search row holds the id three times (the id,
 * and its token: the hex of its bytes, `sessionKeyOf`) beside three indexed texts of at most 600,000 bytes
 * (`maximumIndexedBytes`): with this bound it stays under a Durable Object's 2 MB row.
 */
const maximumSessionIdBytes = 60_000;

/** How many times an append reads again when another writer moved the latest leaf meanwhile. */
const appendAttempts = 50;

/** The columns of a path row read from the message row `m`, its content or its size. */
function rowColumns(order: SqlStatement, content: boolean): SqlStatement {
  return sql`m.${order} AS "order", m.id AS id, m.role AS role, m.parent_id AS parent_id, m.tokens AS tokens,
    m.created_at AS created_at, ${content ? sql`m.content` : sql`''`} AS content,
    m.content_chunks AS content_chunks, ${content ? sql`0` : storedBytes("m")} AS bytes`;
}

/**
 * Session messages in SQLite, on the storage contract `SessionStoreV1` of `@contextblocks/sessions`: the
 * tables of Cloudflare agents' Sessions API (`assistant_messages` and friends), so either reads what the
 * other wrote, over any `SqlSource` (`ctx.storage`, an Agent's `sql`, a better-sqlite3 `Database`, a
 * `SqlClient`). Storage only: a `Session` reads it through its `MessageTree`, which applies the rules
 * (input checks, identical retries, overlays, token stamps, path bounds, refusals).
 *
 * Three layouts of `assistant_messages` (session-schema.ts), each a `LayoutStrategy`: keyed (a new database
 * on a Durable Object), lean (a new one on better-sqlite3) and indexed (one agents@0.22.0 wrote). Costs do
 * not grow with the session where they need not: an append reads the latest leaf it remembers and its
 * parent's row, and writes 2 rows on the keyed and lean layouts; a path is about one row read per message;
 * the path's length and token total are read from the leaf's row (`readPathTotals`).
 */
export class SqliteSessionStore implements SessionStoreV1 {
  readonly specificationVersion = "v1";
  /** A path read with content costs what one without does here: a row per message either way. */
  readonly wholePathReads = true;
  readonly #client: SqlClient;
  readonly #sessionId: string;
  readonly #queue = new SerialQueue();
  readonly #indexOnAppend: boolean;
  readonly #newLayout: NewSessionLayout | undefined;
  readonly #ranking: SearchRanking;
  /** Whether this session held the whole search index when last searched (`searchSortOf`: `"bm25"`). */
  readonly #share = new SessionShare();
  readonly #layouts = new Map<SessionLayout, LayoutStrategy>();

  constructor(source: SqlSource, sessionIdOrOptions?: string | SqliteSessionStoreOptions) {
    const options: SqliteSessionStoreOptions =
      typeof sessionIdOrOptions === "string" ? { sessionId: sessionIdOrOptions } : (sessionIdOrOptions ?? {});
    if (typeof options !== "object" || options === null) {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteSessionStore: the second argument must be a session id or an options object, got ${describeValue(options)}`,
      );
    }
    if (options.sessionId !== undefined && typeof options.sessionId !== "string") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteSessionStore: the session id must be a string, got ${describeValue(options.sessionId)}`,
      );
    }
    this.#client = toSqliteClient(source, { onStatement: options.onStatement });
    if (this.#client.dialect !== "sqlite") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteSessionStore needs a SQLite database; this client's dialect is "${this.#client.dialect}"`,
      );
    }
    this.#sessionId = options.sessionId ?? "";
    this.#indexOnAppend = options.indexOnAppend === true;
    if (
      options.newDatabaseLayout !== undefined &&
      options.newDatabaseLayout !== "keyed" &&
      options.newDatabaseLayout !== "lean"
    ) {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteSessionStore: newDatabaseLayout must be "keyed" or "lean", got ${describeValue(options.newDatabaseLayout)}`,
      );
    }
    this.#newLayout = options.newDatabaseLayout;
    this.#ranking = searchRankingOf(options.searchRanking, "SqliteSessionStore");
  }

  /** The session this store reads and writes. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The client, for the session manager and context blocks on the same database. */
  get client(): SqlClient {
    return this.#client;
  }

  // Reads

  async readPath(
    leafId: string | undefined,
    options: { limit: number; content: boolean },
  ): Promise<MessageRecord[]> {
    const layout = await this.#layoutToRead();
    if (layout === null) return [];
    const limit = Math.floor(options.limit);
    if (!(limit >= 1)) return [];
    let rows: PathRow[];
    if (leafId === undefined && limit === 1) {
      // The latest leaf alone (`getLatestLeaf`): one statement while the remembered leaf holds.
      const row = await layout.latestLeafRow(rowColumns(layout.order, options.content));
      rows = row === null ? [] : [row as unknown as PathRow];
    } else {
      const leaf =
        leafId === undefined ? (await layout.latestLeaf(true)).leaf : await this.#chain(layout).place(leafId);
      rows = leaf === null ? [] : await layout.walk(leaf, limit, options.content);
    }
    return this.#records(rows.reverse(), options.content);
  }

  async readMessages(ids: readonly string[]): Promise<MessageRecord[]> {
    if (ids.length === 0) return [];
    const layout = await this.#layoutToRead();
    if (layout === null) return [];
    const rows = await this.#client.run<PathRow>(sql`
      SELECT ${rowColumns(layout.order, true)} FROM assistant_messages AS m
      WHERE m.id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) AND m.session_id = ${this.#sessionId}`);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const found: PathRow[] = [];
    for (const id of ids) {
      const row = byId.get(id);
      if (row !== undefined) found.push(row);
    }
    return this.#records(found, true);
  }

  async readChildren(parentId: string): Promise<MessageRecord[]> {
    const layout = await this.#layoutToRead();
    if (layout === null) return [];
    // The lean and keyed layouts have no parent index: a scan of the table (branches are read rarely).
    const rows = await this.#client.run<PathRow>(sql`
      SELECT ${rowColumns(layout.order, true)} FROM assistant_messages AS m
        ${layout.layout === "indexed" ? raw("INDEXED BY idx_assistant_msg_parent") : raw("")}
      WHERE m.parent_id = ${parentId} AND m.session_id = ${this.#sessionId} ORDER BY m.${layout.order} ASC`);
    return this.#records(rows, true);
  }

  async readTree(limit: number): Promise<MessageRecord[]> {
    const layout = await this.#layoutToRead();
    if (layout === null) return [];
    const rows = await this.#client.run<PathRow>(sql`
      SELECT m.${layout.order} AS "order", m.id AS id, m.role AS role, m.parent_id AS parent_id,
        m.tokens AS tokens, m.created_at AS created_at
      FROM assistant_messages AS m WHERE m.session_id = ${this.#sessionId}
      ORDER BY m.${layout.order} ASC LIMIT ${Math.floor(limit)}`);
    return rows.map((row) => recordOf(row, "place"));
  }

  /**
   * The length and summed stamps of the path, from the leaf's `depth` and `path_tokens` (written with each
   * row; on the keyed and lean layouts the remembered leaf's row, read with the check that it still is).
   * `null` where a row of the path was written without them or an update or delete above cleared them.
   */
  async readPathTotals(leafId: string | undefined): Promise<PathTotals | null> {
    const layout = await this.#layoutToRead();
    if (layout === null) return { length: 0, tokens: 0 };
    let place: { depth: number | null; pathTokens: number | null } | null;
    if (leafId === undefined) {
      const row = await layout.latestLeafRow(sql`m.depth AS depth, m.path_tokens AS path_tokens`);
      place =
        row === null ? null : { depth: wholeNumber(row.depth), pathTokens: wholeNumber(row.path_tokens) };
    } else {
      place = await this.#chain(layout).place(leafId);
    }
    if (place === null) return { length: 0, tokens: 0 };
    if (place.depth === null || place.pathTokens === null) return null;
    return { length: place.depth + 1, tokens: place.pathTokens };
  }

  // Writes

  async append(records: readonly MessageRecord[], placement: AppendPlacement): Promise<AppendResult> {
    this.#checkSessionIdToWrite("append");
    const links = ChainAppend.linksOf(records);
    return this.#queue.run(async () => {
      for (let attempt = 0; attempt < appendAttempts; attempt++) {
        const layout = await this.#layout();
        if (links.length === 0) {
          const parent =
            placement.parentId === undefined ? (await layout.latestLeaf(true)).leaf?.id : placement.parentId;
          return { status: "appended", parentId: parent ?? null };
        }
        const result = await this.#chain(layout).run(links, placement);
        if (result?.status === "appended") {
          if (layout.layout !== "keyed") await this.#indexAfterAppend(records, result.parentId);
          return result;
        }
        if (result !== null) return result;
        layout.forgetLatestLeaf();
        if (
          layout.layout === "lean" &&
          (await this.#client.run(sql`SELECT 1 AS lean WHERE ${leanLayoutStill}`)).length === 0
        ) {
          // agents@0.22.0 opened the database meanwhile (its parent index is there): from now on the
          // indexed layout's rules, which find through that index the stored messages naming an id.
          forgetLayout(this.#client);
        }
      }
      throw new ContextError(
        "PROVIDER_FAILED",
        `SqliteSessionStore: the latest leaf of session "${clipped(this.#sessionId)}" kept moving under other writers; nothing was stored`,
      );
    });
  }

  async update(record: MessageRecord): Promise<boolean> {
    const content = record.content ?? "";
    const slices = sliceStoredMessage(content, record.id);
    const stamp = wholeNumber(record.tokens);
    const indexed = indexedJsonOf(content, record.role, record.text);
    return this.#queue.run(async () => {
      const layout = await this.#layout();
      const keyed = layout.layout === "keyed";
      const stored = await this.#client.run<{ place: number; tokens: unknown }>(sql`
        SELECT ${layout.order} AS place, tokens FROM assistant_messages
        WHERE id = ${record.id} AND session_id = ${this.#sessionId}`);
      if (stored[0] === undefined) return false;
      const place = Number(stored[0].place);
      // A changed token stamp changes the path totals of the rows below it: cleared, summed again when
      // needed (the remembered leaf's too). Updating the newest message (a streamed one) clears none.
      const restamped = wholeNumber(stored[0].tokens) !== stamp;
      if (restamped) layout.forgetLatestLeaf();
      const chunks = slices.length - 1;
      const statements: SqlStatement[] = [
        ...continuationRows(record.id, slices),
        sql`DELETE FROM assistant_message_chunks WHERE id = ${record.id} AND idx > ${chunks}`,
        sql`UPDATE assistant_messages SET content = ${slices[0] ?? ""}, role = ${record.role},
          content_chunks = ${chunks > 0 ? chunks : null}, tokens = ${stamp},
          path_tokens = path_tokens - tokens + ${stamp}
          WHERE id = ${record.id} AND session_id = ${this.#sessionId}`,
        ...(restamped && !(keyed && (await this.#newest(place)))
          ? this.#clearTotalsBelow(layout, record.id, place)
          : []),
        ...(keyed
          ? [keyedRowUpdateStatement(place, record.id, indexed, record.role)]
          : await this.#unindexStatements(record.id, place)),
      ];
      const withContext = await hasContextColumn(this.#client);
      if (indexed.text.length > 0 && !keyed) {
        statements.push(
          indexMessageStatement(this.#sessionId, record.id, indexed, withContext, { indexedOnly: true }),
        );
      }
      // Its children, grandchildren, parent and grandparent carry its text as context.
      statements.push(
        ...refreshContextStatements(
          this.#sessionId,
          record.id,
          await this.#parentOf(record.id),
          withContext,
          keyed ? "seq" : "rowid",
        ),
      );
      await this.#client.batch(statements);
      // The remembered tail's context (the next append's search row) takes the new text.
      if (keyed) rememberUpdatedText(this.#client, this.#sessionId, record.id, indexed.text);
      return true;
    });
  }

  async delete(ids: readonly string[]): Promise<void> {
    return this.#queue.run(async () => {
      const layout = await this.#layout();
      this.#forgetLatestLeaves();
      const keyed = layout.layout === "keyed";
      const lean = layout.layout !== "indexed";
      for (const id of ids) {
        const rows = await this.#client.run<{ place: number }>(sql`
          SELECT ${layout.order} AS place FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`);
        if (rows[0] === undefined) continue;
        const place = Number(rows[0].place);
        const parentId = await this.#parentOf(id);
        await this.#client.batch([
          ...(keyed
            ? [searchOrderBump, sql`DELETE FROM assistant_fts WHERE rowid = ${place} AND id = ${id}`]
            : await this.#unindexStatements(id, place)),
          ...this.#clearTotalsBelow(layout, id, place, "depth"),
          // No parent index: an id that stays a parent is tombstoned.
          ...(lean ? [tombstoneStatement(this.#sessionId, id)] : []),
          sql`DELETE FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`,
          sql`DELETE FROM assistant_message_chunks WHERE id = ${id}`,
          sql`DELETE FROM assistant_leaves WHERE session_id = ${this.#sessionId} AND leaf_id = ${id}`,
          ...refreshContextStatements(
            this.#sessionId,
            id,
            parentId,
            await hasContextColumn(this.#client),
            keyed ? "seq" : "rowid",
          ),
          // SQLite gives the next row the largest rowid + 1: the mark must stay below any new rowid.
          ...(keyed ? [] : [lowerIndexMark]),
        ]);
      }
    });
  }

  async clear(): Promise<void> {
    return this.#queue.run(async () => {
      const layout = await this.#layout();
      this.#forgetLatestLeaves();
      await this.#client.batch([
        sql`DELETE FROM assistant_message_tombstones WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_message_chunks WHERE id IN (
          SELECT id FROM assistant_messages WHERE session_id = ${this.#sessionId} AND content_chunks > 0)`,
        sql`DELETE FROM assistant_messages WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_compactions WHERE session_id = ${this.#sessionId}`,
        ...(layout.layout === "keyed" ? [searchOrderBump] : []),
        sql`DELETE FROM assistant_fts WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_leaves WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_token_calibration WHERE session_id = ${this.#sessionId}`,
        ...(layout.layout === "keyed" ? [] : [lowerIndexMark]),
      ]);
    });
  }

  // Overlays, search, calibration

  async addOverlay(overlay: StoredCompaction): Promise<void> {
    this.#checkSessionIdToWrite("addOverlay");
    // One row holds the summary: a Durable Object refuses a row over 2 MB with a bare SQLITE_TOOBIG.
    const tooLarge = rowTooLarge([
      overlay.summary,
      overlay.id,
      overlay.fromMessageId,
      overlay.toMessageId,
      overlay.createdAt,
      this.#sessionId,
    ]);
    if (tooLarge !== undefined) {
      throw new ContextError(
        "INVALID_INPUT",
        `addCompaction: the summary with its row's other text ${tooLarge}: shorten the summary; nothing was stored`,
      );
    }
    if ((await this.#layout()).layout === "keyed") {
      // The keyed overlay table: one row under the session's next seq (its largest is one seek).
      await this.#client.query`
        INSERT INTO assistant_compactions
          (session_id, seq, id, summary, from_message_id, to_message_id, created_at)
        VALUES (${this.#sessionId},
          (SELECT COALESCE(MAX(seq), 0) + 1 FROM assistant_compactions WHERE session_id = ${this.#sessionId}),
          ${overlay.id}, ${overlay.summary}, ${overlay.fromMessageId}, ${overlay.toMessageId}, ${overlay.createdAt})`;
      return;
    }
    await this.#client.query`
      INSERT INTO assistant_compactions (id, session_id, summary, from_message_id, to_message_id, created_at)
      VALUES (${overlay.id}, ${this.#sessionId}, ${overlay.summary}, ${overlay.fromMessageId},
        ${overlay.toMessageId}, ${overlay.createdAt})`;
  }

  async readOverlays(): Promise<StoredCompaction[]> {
    return this.#overlays("ASC", null);
  }

  async readNewestOverlay(): Promise<StoredCompaction | null> {
    return (await this.#overlays("DESC", 1))[0] ?? null;
  }

  async search(query: string, limit: number): Promise<StoredSearchHit[]> {
    // Refused before the tables are looked for: a bad query or limit does no work, with tables or without.
    checkSearchQuery(query);
    checkSearchLimit(limit);
    const strategy = await this.#layoutToRead();
    if (strategy === null) return [];
    const { layout } = strategy;
    // The keyed layout writes each search row on append: nothing to catch up.
    if (layout !== "keyed") await runSteps(this.#client, catchUpWhereWritable(this.#client));
    const hits = await searchMessageIndex(this.#client, query, {
      limit,
      sessionId: this.#sessionId,
      ranking: this.#ranking,
      sort: searchSortOf(this.#client),
      share: this.#share,
      sessionTokens: sessionTokensOf(layout),
    });
    // A row holds the words it has in a compatibility form after its text (`searchableText`): handed back as written.
    for (const hit of hits) hit.text = writtenText(hit.text);
    return hits;
  }

  async readCalibration(): Promise<number | null> {
    if ((await this.#layoutToRead()) === null) return null;
    const rows = await this.#client.query<{ calibration: number }>`
      SELECT calibration FROM assistant_token_calibration WHERE session_id = ${this.#sessionId}`;
    const value = rows[0] === undefined ? null : Number(rows[0].calibration);
    return value !== null && Number.isFinite(value) && value > 0 ? value : null;
  }

  async writeCalibration(calibration: number): Promise<void> {
    this.#checkSessionIdToWrite("writeCalibration");
    await this.#layout();
    await this.#client.query`
      INSERT INTO assistant_token_calibration (session_id, calibration) VALUES (${this.#sessionId}, ${calibration})
      ON CONFLICT(session_id) DO UPDATE SET calibration = excluded.calibration`;
  }

  // Internals

  /**
   * Refuses a write that would add a row to a session whose id is over `maximumSessionIdBytes`: every row of
   * the session holds its id, and a Durable Object refuses a row over 2 MB with a bare SQLITE_TOOBIG. Reads,
   * updates and removals of such a session go ahead.
   */
  #checkSessionIdToWrite(operation: string): void {
    const bytes = rowBytesOver([this.#sessionId], maximumSessionIdBytes);
    if (bytes === undefined) return;
    throw new ContextError(
      "INVALID_INPUT",
      `SqliteSessionStore.${operation}: the session id is ${bytes.toLocaleString("en-US")} bytes as UTF-8; a SQLite session store writes to sessions whose id is at most ${maximumSessionIdBytes.toLocaleString("en-US")} bytes; nothing was stored`,
    );
  }

  /** The session's overlays in the order they were added (`seq` on the keyed layout, else `rowid`). */
  async #overlays(direction: "ASC" | "DESC", limit: number | null): Promise<StoredCompaction[]> {
    const layout = await this.#layoutToRead();
    if (layout === null) return [];
    const order = layout.layout === "keyed" ? "seq" : "rowid";
    const rows = await this.#client.run<{
      id: string;
      summary: string;
      from_message_id: string;
      to_message_id: string;
      created_at: string;
    }>(sql`SELECT id, summary, from_message_id, to_message_id, created_at FROM assistant_compactions
      WHERE session_id = ${this.#sessionId} ORDER BY ${raw(`${order} ${direction}`)}
      ${limit === null ? sql`` : sql`LIMIT ${limit}`}`);
    return rows.map((row) => ({
      id: row.id,
      summary: row.summary,
      fromMessageId: row.from_message_id,
      toMessageId: row.to_message_id,
      createdAt: row.created_at,
    }));
  }

  /**
   * The lean and indexed layouts' search rows for an append that is already stored. Indexing is work the next
   * search's catch-up redoes from the index's mark, so a failure here (a locked or damaged index) must not
   * report a stored append as failed: a caller would retry a message that is there. A lasting failure
   * surfaces in the search that needs the index.
   */
  async #indexAfterAppend(records: readonly MessageRecord[], parentId: string | null): Promise<void> {
    try {
      if (this.#indexOnAppend) await this.#indexAppended(records, parentId);
      else await this.#boundCatchUp(records.length);
    } catch {
      // Left to the next search's catch-up (see above).
    }
  }

  /**
   * Lean and indexed layouts: once the appends since the index last caught up reach `catchUpEvery` messages,
   * the append indexes them, so a search never catches up on more than that many in its own request (the
   * first search after many appends costs about what a warm one does). On a Durable Object that is the search
   * rows a lazy index would write at the first search anyway (one per message, as the keyed layout and
   * agents@0.22.0 write on append), paid as the session grows: a session never searched writes them too.
   */
  async #boundCatchUp(appended: number): Promise<void> {
    if (countUnindexed(this.#client, appended)) await catchUpMessageIndex(this.#client);
  }

  /** The strategy of the database's layout (its tables created on first use: a write's). */
  async #layout(): Promise<LayoutStrategy> {
    return this.#strategy(await schemaReady(this.#client, this.#newLayout));
  }

  /**
   * The strategy for a read: `null` while the database has no session tables, which a read does not create
   * (it finds nothing, as in a session without messages; `schemaToRead`).
   */
  async #layoutToRead(): Promise<LayoutStrategy | null> {
    const name = await schemaToRead(this.#client, this.#newLayout);
    return name === null ? null : this.#strategy(name);
  }

  #strategy(name: SessionLayout): LayoutStrategy {
    let layout = this.#layouts.get(name);
    if (layout === undefined) {
      layout =
        name === "keyed"
          ? new KeyedLayout(this.#client, this.#sessionId)
          : name === "lean"
            ? new LeanLayout(this.#client, this.#sessionId)
            : new IndexedLayout(this.#client, this.#sessionId);
      this.#layouts.set(name, layout);
    }
    return layout;
  }

  #chain(layout: LayoutStrategy): ChainAppend {
    return new ChainAppend(this.#client, this.#sessionId, layout);
  }

  /** Forgets every remembered latest leaf of the session (the lean and keyed layouts remember one). */
  #forgetLatestLeaves(): void {
    rememberTail(this.#client, this.#sessionId, undefined);
    rememberKeyedTail(this.#client, this.#sessionId, undefined);
  }

  /** Records of rows in order, their continuation rows joined where content was read (one read for all). */
  async #records(rows: readonly PathRow[], content: boolean): Promise<MessageRecord[]> {
    const continued = content
      ? await readContinuations(
          this.#client,
          rows.filter((row) => Number(row.content_chunks ?? 0) > 0).map((row) => row.id),
        )
      : new Map<string, string>();
    return rows.map((row) => recordOf(row, content ? "content" : "bytes", continued));
  }

  /**
   * `indexOnAppend` on the lean and indexed layouts: the appended messages' search rows, with their context
   * from their ancestors' rows; when the index is behind (the mark does not move), the next search indexes
   * the range again, context included.
   */
  async #indexAppended(records: readonly MessageRecord[], parentId: string | null): Promise<void> {
    const withContext = await hasContextColumn(this.#client);
    const statements: SqlStatement[] = [];
    let parent = parentId;
    for (const record of records) {
      const indexed = indexedJsonOf(record.content ?? "", record.role, record.text);
      if (indexed.text.length > 0) {
        statements.push(
          indexMessageStatement(this.#sessionId, record.id, indexed, withContext),
          // Its parent's and grandparent's rows gain it as the turn after them.
          ...refreshContextStatements(this.#sessionId, record.id, parent, withContext),
          sql`UPDATE assistant_fts_state SET indexed_rowid = (SELECT rowid FROM assistant_messages
            WHERE id = ${record.id}) WHERE key = 'messages' AND indexed_rowid = (SELECT rowid - 1
            FROM assistant_messages WHERE id = ${record.id})`,
        );
      }
      parent = record.id;
    }
    if (statements.length > 0) await this.#client.batch(statements);
  }

  /** True when `seq` is the largest given (the newest message of the table: no row lies after it). */
  async #newest(seq: number): Promise<boolean> {
    const rows = await this.#client.run<{ top: number }>(sql`SELECT ${largestSeq} AS top`);
    return Number(rows[0]?.top) === seq;
  }

  /**
   * After a message's stamp changed (or, with `depth`, it was deleted): the totals of the rows below it are
   * cleared, summed again when needed. The lean and keyed layouts have no parent index: the later rows of
   * the session (descendants are inserted after their ancestors); the indexed one walks the children.
   */
  #clearTotalsBelow(layout: LayoutStrategy, id: string, place: number, depth?: "depth"): SqlStatement[] {
    const cleared = depth === "depth" ? raw("depth = NULL, path_tokens = NULL") : raw("path_tokens = NULL");
    const stale =
      depth === "depth"
        ? raw("(depth IS NOT NULL OR path_tokens IS NOT NULL)")
        : raw("path_tokens IS NOT NULL");
    if (layout.layout !== "indexed") {
      return [
        sql`UPDATE assistant_messages SET ${cleared}
          WHERE ${layout.order} > ${place} AND session_id = ${this.#sessionId} AND ${stale}`,
      ];
    }
    return [
      sql`UPDATE assistant_messages SET ${cleared} WHERE id IN (
        WITH RECURSIVE below(id) AS (
          SELECT id FROM assistant_messages WHERE parent_id = ${id} AND session_id = ${this.#sessionId}
          UNION
          SELECT m.id FROM assistant_messages m JOIN below b ON m.parent_id = b.id
            WHERE +m.session_id = ${this.#sessionId}
        ) SELECT id FROM below) AND ${stale}`,
    ];
  }

  /** The parent id of a stored message (`null` for a root or an unknown id). */
  async #parentOf(id: string): Promise<string | null> {
    const rows = await this.#client.query<{ parent_id: string | null }>`
      SELECT parent_id FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`;
    return rows[0]?.parent_id ?? null;
  }

  /** Statements that remove a message's FTS row: by rowid when we indexed it, else by id (a scan). */
  async #unindexStatements(id: string, rowid: number): Promise<SqlStatement[]> {
    const indexed = await this.#client.query<{
      id: string;
    }>`SELECT id FROM assistant_fts WHERE rowid = ${rowid}`;
    if (indexed[0]?.id === id) return [sql`DELETE FROM assistant_fts WHERE rowid = ${rowid}`];
    return [sql`DELETE FROM assistant_fts WHERE id = ${id} AND session_id = ${this.#sessionId}`];
  }
}

/** After a delete: the search index's mark never above the largest rowid left. */
const lowerIndexMark = sql`UPDATE assistant_fts_state SET indexed_rowid = MIN(indexed_rowid,
  (SELECT COALESCE(MAX(rowid), 0) FROM assistant_messages)) WHERE key = 'messages'`;
