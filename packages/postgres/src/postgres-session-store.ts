import { ContextError, describeValue } from "@contextblocks/core";
import {
  type AppendedMessage,
  applyCompactions,
  checkCalibration,
  checkCompactionArguments,
  checkRecentHistoryBudget,
  checkSessionMessage,
  checkWholePath,
  isIdenticalRetry,
  type MessageNode,
  maximumPathLength,
  messageTokenStamp,
  orderPath,
  type PathMessagesResult,
  parseStoredMessages as parseAll,
  parseStoredMessage as parseMessage,
  pathTokensWithOverlays,
  type RecentHistoryResult,
  type SearchResult,
  type SessionMessage,
  type SessionStore,
  type StoredCompaction,
  type StoredIdHolder,
  sameOverlay,
  serializeMessage as serialize,
  storedIdError,
  storedTokenStamp,
  textOfMessage,
} from "@contextblocks/sessions";
import {
  type SqlClient,
  type SqlRow,
  type SqlStatement,
  type StatementObserver,
  sql,
} from "@contextblocks/sql";
import {
  checkStorable as checkText,
  ensureTable,
  isMissingTable,
  TableAccess,
  unstorable,
} from "@contextblocks/sql-stores";
import { type PostgresSource, postgresClient } from "./client.js";
import { searchMessages } from "./message-search.js";
import { staleSearchFieldsStatement } from "./message-search-index.js";
import { contextTextOf, refreshContextStatement } from "./message-search-statement.js";
import { SESSION_TABLES } from "./schema.js";
import { indexableText } from "./text-checks.js";
import { timeText } from "./time-text.js";

const PROVIDER = "PostgresSessionStore";

/** Options of `PostgresSessionStore`. */
export interface PostgresSessionStoreOptions {
  /** Keeps this session's messages apart from others in the same tables. Default `""`, as `agents`. */
  sessionId?: string | undefined;
  /** Create the tables on first use when they are missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/**
 * How many times an append runs its insert again when what stopped it (a message with its id, or one naming
 * it as parent) was gone when read back.
 */
const appendAttempts = 5;

/** Most nodes `getTree` returns when no limit is given. */
const defaultTreeLimit = 10_000;

interface MessageRow {
  content: string;
}

interface PathRow extends MessageRow {
  id: string;
  parent_id?: string | null;
  step: number;
}

/**
 * Session messages as a tree in Postgres (`SessionStore`), in the `assistant_messages` and
 * `assistant_compactions` tables of Cloudflare agents' Sessions API (plus a `depth` and a `position` column
 * and the `assistant_leaves` pointer table, see `POSTGRES_SCHEMA`), with the behaviour of the SQLite store.
 *
 * - An append is ONE statement (one round trip, no BEGIN/COMMIT): it upserts the session's latest-leaf
 *   pointer row first, which locks it; under READ COMMITTED a concurrent append waits on that row lock and
 *   then reads the row's newest version (parent and depth of the new message come from the pointer row
 *   itself, never from the statement's older snapshot). Appends from any number of connections therefore
 *   chain; none forks or is lost.
 * - A path read is one recursive statement that walks `parent_id` up from the leaf by primary key: its cost
 *   grows with the path, never with the session. The path length is the leaf's stored `depth` (one row).
 * - Search is Postgres full-text over `content_tsv` (GIN), with the shared query planning.
 */
export class PostgresSessionStore implements SessionStore {
  readonly #client: SqlClient;
  readonly #sessionId: string;
  readonly #access: TableAccess;

  constructor(source: PostgresSource, sessionIdOrOptions?: string | PostgresSessionStoreOptions) {
    const options: PostgresSessionStoreOptions =
      typeof sessionIdOrOptions === "string" ? { sessionId: sessionIdOrOptions } : (sessionIdOrOptions ?? {});
    if (typeof options !== "object" || options === null) {
      throw invalidConfig(
        `the second argument must be a session id or an options object, got ${describeValue(options)}`,
      );
    }
    const { sessionId = "", createTables = true } = options;
    if (typeof sessionId !== "string") {
      throw invalidConfig(`the session id must be a string, got ${describeValue(sessionId)}`);
    }
    checkText(sessionId, "session id", PROVIDER, "postgres", "INVALID_CONFIG", undefined);
    if (typeof createTables !== "boolean") {
      throw invalidConfig(`createTables must be a boolean, got ${describeValue(createTables)}`);
    }
    this.#client = postgresClient(source, options.onStatement, PROVIDER);
    this.#sessionId = sessionId;
    this.#access = new TableAccess(this.#client, SESSION_TABLES, createTables, PROVIDER);
  }

  /** The session this store reads and writes. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The client, for context blocks on the same database. */
  get client(): SqlClient {
    return this.#client;
  }

  async getMessage(id: string): Promise<SessionMessage | null> {
    if (!storableId(id)) return null;
    const rows = await this.#read<MessageRow>(
      sql`SELECT content FROM assistant_messages WHERE session_id = ${this.#sessionId} AND id = ${id}`,
    );
    return rows[0] === undefined ? null : parseMessage(rows[0].content);
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    if (leafId !== undefined && leafId !== null && !storableId(leafId)) return [];
    const [rows, compactions] = await Promise.all([
      this.#read<PathRow>(sql`WITH RECURSIVE ${this.#leaf(leafId)},
${this.#path(sql`m.content`)}
SELECT id, parent_id, step, content FROM path`),
      this.getCompactions(),
    ]);
    const ordered = orderPath(rows);
    checkWholePath(ordered, "getHistory");
    return applyCompactions(parseAll(ordered), compactions);
  }

  /**
   * The stored path root..leaf, overlays not applied, in one recursive statement. With `maxBytes`, the
   * budget is applied in SQL on the stored sizes (`octet_length`), root first (leaf first with
   * `newestFirst`): rows after the first one whose running total passes it are left out (their content is
   * not returned), and `truncated` says so.
   */
  async getPathMessages(
    leafId?: string | null,
    options?: { maxBytes?: number; newestFirst?: boolean },
  ): Promise<PathMessagesResult> {
    if (leafId !== undefined && leafId !== null && !storableId(leafId))
      return { messages: [], truncated: false };
    const maxBytes = options?.maxBytes;
    const bounded = typeof maxBytes === "number" && Number.isFinite(maxBytes) && maxBytes >= 0;
    const rows = await this.#read<
      PathRow & { path_length: string | number }
    >(sql`WITH RECURSIVE ${this.#leaf(leafId)},
${this.#path(sql`m.content`)},
sized AS (
  SELECT id, parent_id, step, content, count(*) OVER () AS path_length,
    sum(octet_length(content)) OVER (ORDER BY step ${options?.newestFirst === true ? sql`ASC` : sql`DESC`})
      - octet_length(content) AS before
  FROM path
)
SELECT id, parent_id, step, content, path_length FROM sized
${bounded ? sql`WHERE before <= ${maxBytes}::float8` : sql``}`);
    const ordered = orderPath(rows);
    const pathLength = Number(rows[0]?.path_length ?? 0);
    if (pathLength > maximumPathLength && (ordered[0]?.parent_id ?? null) !== null) {
      throw new ContextError(
        "INVALID_INPUT",
        `getHistory: the path to "${leafId ?? "the latest leaf"}" is longer than ${maximumPathLength} messages (or its parent links loop); read it with getRecentHistory, which says when it is truncated`,
      );
    }
    return { messages: parseAll(ordered), truncated: ordered.length < pathLength };
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages = 1,
  ): Promise<RecentHistoryResult> {
    checkRecentHistoryBudget(maxBytes);
    if (leafId !== undefined && leafId !== null && !storableId(leafId)) {
      return { messages: [], truncated: false, totalContentBytes: 0 };
    }
    const floor = Math.max(1, Math.floor(Number(minMessages) || 1));
    // Walks up while the window is under its floor or the next message still fits: only the window's rows
    // are read. `older` tells whether a stored message lies beyond the window.
    const [rows, compactions] = await Promise.all([
      this.#read<
        PathRow & { total: string | number; older: boolean }
      >(sql`WITH RECURSIVE ${this.#leaf(leafId)},
path (id, parent_id, content, step, total) AS (
  SELECT m.id, m.parent_id, m.content, 0, octet_length(m.content)::bigint FROM leaf CROSS JOIN LATERAL (
    SELECT id, parent_id, content FROM assistant_messages WHERE session_id = ${this.#sessionId} AND id = leaf.id LIMIT 1
  ) m
  UNION ALL
  SELECT m.id, m.parent_id, m.content, p.step + 1, p.total + octet_length(m.content) FROM path p CROSS JOIN LATERAL (
    SELECT id, parent_id, content FROM assistant_messages WHERE session_id = ${this.#sessionId} AND id = p.parent_id LIMIT 1
  ) m
  WHERE p.step < ${maximumPathLength}
    AND (p.step + 1 < ${floor} OR p.total + octet_length(m.content) <= ${maxBytes})
)
SELECT path.id, path.step, path.content, path.total, (
  SELECT count(*) FROM assistant_messages o WHERE o.session_id = ${this.#sessionId} AND o.id = path.parent_id
) > 0 AS older
FROM path`),
      this.getCompactions(),
    ]);
    const ordered = orderPath(rows);
    const truncated = ordered[0]?.older === true;
    const total = rows.reduce((largest, row) => Math.max(largest, Number(row.total)), 0);
    return {
      messages: applyCompactions(parseAll(ordered), compactions),
      truncated,
      totalContentBytes: total,
    };
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    const rows = await this.#read<MessageRow>(sql`WITH ${this.#leaf(undefined)}
SELECT m.content FROM leaf CROSS JOIN LATERAL (
  SELECT content FROM assistant_messages WHERE session_id = ${this.#sessionId} AND id = leaf.id LIMIT 1
) m`);
    return rows[0] === undefined ? null : parseMessage(rows[0].content);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    if (!storableId(messageId)) return [];
    const rows = await this.#read<MessageRow>(sql`SELECT content FROM assistant_messages
WHERE session_id = ${this.#sessionId} AND parent_id = ${messageId} ORDER BY position`);
    return parseAll(rows);
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    if (leafId !== undefined && leafId !== null && !storableId(leafId)) return 0;
    const rows = await this.#read<{ id: string; depth: number | null }>(
      sql`WITH ${this.#leaf(leafId)} SELECT id, depth FROM leaf`,
    );
    const leaf = rows[0];
    if (leaf === undefined) return 0;
    if (typeof leaf.depth === "number") return leaf.depth + 1;
    // A row another writer made: counted along its path once, then stored.
    const counted = await this.#read<{
      steps: number;
    }>(sql`WITH RECURSIVE leaf (id) AS (SELECT ${leaf.id}::text),
${this.#path(sql`NULL::text`)}
SELECT count(*)::int AS steps FROM path`);
    const depth = Math.max(0, (counted[0]?.steps ?? 1) - 1);
    await this.#read(sql`UPDATE assistant_messages SET depth = ${depth}
WHERE session_id = ${this.#sessionId} AND id = ${leaf.id} AND depth IS NULL`);
    return depth + 1;
  }

  async appendMessage(
    message: SessionMessage,
    parentId?: string | null,
  ): Promise<AppendedMessage | undefined> {
    const checked = checkSessionMessage(message, "appendMessage");
    checkText(checked.id, "message id", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    checkText(checked.role, "role", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    if (parentId !== undefined && parentId !== null) {
      if (typeof parentId !== "string" || parentId.length === 0) {
        throw new ContextError(
          "INVALID_INPUT",
          `appendMessage: parentId must be a non-empty string, null or omitted, got ${describeValue(parentId)}`,
        );
      }
      if (parentId === checked.id) {
        throw new ContextError(
          "INVALID_INPUT",
          `appendMessage: message "${checked.id}" cannot be its own parent`,
        );
      }
      if (!storableId(parentId)) throw missingParent(parentId, checked.id);
    }
    const content = serialize(checked);
    const text = indexableText(textOfMessage(checked));
    const insert = this.#insertStatement(checked, content, text, parentId);
    for (let attempt = 0; attempt < appendAttempts; attempt++) {
      let rows: SqlRow[];
      try {
        [rows = []] = await this.#access.write([insert]);
      } catch (error) {
        // Another writer stored the id in this session after this statement's snapshot was taken (it waited
        // on the pointer row's lock): the primary key refused it, and the row holding the id decides below.
        if (sqlState(error) !== "23505") throw error;
        rows = [];
      }
      const result = rows[0] as { stored?: unknown; parent_id?: unknown; created_at?: unknown } | undefined;
      if (Number(result?.stored ?? 0) > 0) {
        return {
          parentId: typeof result?.parent_id === "string" ? result.parent_id : null,
          createdAt:
            result?.created_at === null || result?.created_at === undefined
              ? null
              : timeText(result.created_at),
        };
      }
      const holder = await this.#holderOf(checked.id);
      if (holder !== null) {
        const appended = { sessionId: this.#sessionId, parentId, content };
        if (!isIdenticalRetry(holder, appended)) {
          throw storedIdError("appendMessage", checked.id, holder, appended);
        }
        return { parentId: holder.parentId, createdAt: holder.createdAt };
      }
      const orphans = await this.#read<{ id: string }>(sql`SELECT id FROM assistant_messages
WHERE session_id = ${this.#sessionId} AND parent_id = ${checked.id} LIMIT 3`);
      if (orphans.length > 0) {
        throw new ContextError(
          "INVALID_INPUT",
          `appendMessage: id "${checked.id}" is still the parent of stored messages (${orphans
            .map((row) => `"${row.id}"`)
            .join(
              ", ",
            )}; it was deleted without them); storing a new message under it could make a cycle: use another id`,
        );
      }
      if (typeof parentId === "string") throw missingParent(parentId, checked.id);
      // What stopped the insert (a message holding the id, or one naming it as parent) was deleted since:
      // the insert is tried again.
    }
    throw new ContextError(
      "PROVIDER_FAILED",
      `appendMessage: message "${checked.id}" was not stored: the rows that stopped its insert (a message with its id, or one naming it as parent) kept being deleted by other writers`,
    );
  }

  /** The stored row that holds `id`, this session's first (a database may hold an id twice, see README). */
  async #holderOf(id: string): Promise<(StoredIdHolder & { createdAt: string | null }) | null> {
    const rows = await this.#read<{
      session_id: string;
      parent_id: string | null;
      content: string;
      created_at: unknown;
    }>(sql`SELECT session_id, parent_id, content, created_at FROM assistant_messages WHERE id = ${id}
ORDER BY session_id = ${this.#sessionId} DESC LIMIT 1`);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      sessionId: row.session_id,
      parentId: row.parent_id,
      content: row.content,
      createdAt: row.created_at === null || row.created_at === undefined ? null : timeText(row.created_at),
    };
  }

  /**
   * The path's estimated tokens as `getHistory` returns it: the stamps along the path summed in one
   * statement (content is read only for rows without a stamp, another writer's), overlays applied.
   */
  async getPathTokens(leafId?: string | null): Promise<number> {
    if (leafId !== undefined && leafId !== null && !storableId(leafId)) return 0;
    const session = this.#sessionId;
    const step = (from: SqlStatement) => sql`SELECT id, parent_id, role, tokens,
      CASE WHEN tokens IS NULL THEN content END AS content
    FROM assistant_messages WHERE session_id = ${session} AND id = ${from} LIMIT 1`;
    const [rows, compactions] = await Promise.all([
      this.#read<{ id: string; role: string; tokens: number | null; content: string | null; step: number }>(
        sql`WITH RECURSIVE ${this.#leaf(leafId)},
path (id, parent_id, role, tokens, content, step) AS (
  SELECT m.id, m.parent_id, m.role, m.tokens, m.content, 0 FROM leaf CROSS JOIN LATERAL (${step(sql`leaf.id`)}) m
  UNION ALL
  SELECT m.id, m.parent_id, m.role, m.tokens, m.content, p.step + 1 FROM path p
    CROSS JOIN LATERAL (${step(sql`p.parent_id`)}) m
  WHERE p.step < ${maximumPathLength}
)
SELECT id, role, tokens, content, step FROM path`,
      ),
      this.getCompactions(),
    ]);
    const steps = orderPath(rows).map((row) => {
      let tokens = storedTokenStamp(row.tokens);
      if (tokens === null) {
        const message = parseMessage(row.content ?? "");
        tokens = message === null ? 0 : messageTokenStamp(message);
      }
      return { id: row.id, role: row.role, tokens };
    });
    return pathTokensWithOverlays(steps, compactions);
  }

  async getTokenCalibration(): Promise<number | null> {
    const rows = await this.#read<{ calibration: unknown }>(
      sql`SELECT calibration FROM assistant_token_calibration WHERE session_id = ${this.#sessionId}`,
    );
    const value = rows[0] === undefined ? null : Number(rows[0].calibration);
    return value !== null && Number.isFinite(value) && value > 0 ? value : null;
  }

  async setTokenCalibration(calibration: number): Promise<void> {
    const checked = checkCalibration(calibration);
    await this.#access.write([
      sql`INSERT INTO assistant_token_calibration (session_id, calibration) VALUES (${this.#sessionId}, ${checked})
ON CONFLICT (session_id) DO UPDATE SET calibration = excluded.calibration`,
    ]);
  }

  async getNode(id: string): Promise<MessageNode | null> {
    if (!storableId(id)) return null;
    const rows = await this.#read<NodeRow>(sql`SELECT id, parent_id, role, created_at FROM assistant_messages
WHERE session_id = ${this.#sessionId} AND id = ${id}`);
    return rows[0] === undefined ? null : nodeOf(rows[0]);
  }

  async getTree(options: { limit?: number } = {}): Promise<MessageNode[]> {
    const limit = options?.limit ?? defaultTreeLimit;
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) {
      throw new ContextError(
        "INVALID_INPUT",
        `getTree: limit must be a positive whole number, got ${String(limit)}`,
      );
    }
    const rows = await this.#read<NodeRow>(sql`SELECT id, parent_id, role, created_at FROM assistant_messages
WHERE session_id = ${this.#sessionId} ORDER BY position LIMIT ${limit}`);
    return rows.map(nodeOf);
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    const content = serialize(checked);
    checkText(checked.role, "role", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    const text = indexableText(textOfMessage(checked));
    // Its children and grandchildren carry its text as search context: read again in the same transaction.
    const rows = storableId(checked.id)
      ? ((
          await this.#transaction([
            sql`UPDATE assistant_messages
SET content = ${content}, role = ${checked.role}, text_content = ${text}, tokens = ${messageTokenStamp(checked)}
WHERE session_id = ${this.#sessionId} AND id = ${checked.id} RETURNING id`,
            refreshContextStatement(this.#sessionId, JSON.stringify([checked.id])),
            staleSearchFieldsStatement(this.#sessionId, JSON.stringify([checked.id])),
          ])
        )[1] ?? [])
      : [];
    if (rows.length === 0) {
      throw new ContextError("NOT_FOUND", `updateMessage: no message "${checked.id}" in this session`);
    }
  }

  async deleteMessages(messageIds: readonly string[]): Promise<void> {
    if (!Array.isArray(messageIds)) {
      throw new ContextError(
        "INVALID_INPUT",
        `deleteMessages: expected an array of ids, got ${describeValue(messageIds)}`,
      );
    }
    const ids = messageIds.filter((id): id is string => typeof id === "string" && storableId(id));
    if (ids.length === 0) return;
    const list = JSON.stringify(ids);
    const session = this.#sessionId;
    await this.#transaction([
      // Their parents and grandparents index the turns after them again at the next search.
      staleSearchFieldsStatement(session, list),
      // Descendants keep their parent link (as in agents) but their depth no longer holds.
      sql`WITH RECURSIVE doomed (id) AS (SELECT json_array_elements_text(${list}::text::json)),
below (id, step) AS (
  SELECT m.id, 1 FROM doomed d CROSS JOIN LATERAL (
    SELECT id FROM assistant_messages WHERE session_id = ${session} AND parent_id = d.id OFFSET 0
  ) m
  UNION ALL
  SELECT m.id, b.step + 1 FROM below b CROSS JOIN LATERAL (
    SELECT id FROM assistant_messages WHERE session_id = ${session} AND parent_id = b.id OFFSET 0
  ) m
  WHERE b.step < ${maximumPathLength}
)
UPDATE assistant_messages SET depth = NULL
WHERE session_id = ${session} AND depth IS NOT NULL AND id IN (SELECT id FROM below)`,
      sql`DELETE FROM assistant_messages
WHERE session_id = ${session} AND id IN (SELECT json_array_elements_text(${list}::text::json))`,
      // The pointer named a deleted message: it moves to the newest childless message (under the lock).
      sql`DELETE FROM assistant_leaves l WHERE l.session_id = ${session} AND NOT EXISTS (
  SELECT 1 FROM assistant_messages m WHERE m.session_id = l.session_id AND m.id = l.leaf_id)`,
      sql`INSERT INTO assistant_leaves (session_id, leaf_id, parent_id, depth)
SELECT ${session}, m.id, m.parent_id, m.depth FROM assistant_messages m
WHERE m.session_id = ${session}
  AND NOT EXISTS (SELECT 1 FROM assistant_leaves l WHERE l.session_id = ${session})
  AND ${childless(sql`m.session_id`, sql`m.id`)}
ORDER BY m.position DESC LIMIT 1`,
      refreshContextStatement(session, list),
    ]);
  }

  async clearMessages(): Promise<void> {
    const session = this.#sessionId;
    await this.#transaction([
      sql`DELETE FROM assistant_messages WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_compactions WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_leaves WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_token_calibration WHERE session_id = ${session}`,
    ]);
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
  ): Promise<StoredCompaction> {
    checkCompactionArguments(summary, fromMessageId, toMessageId);
    checkText(summary, "summary", PROVIDER, "postgres", "INVALID_INPUT", undefined);
    for (const [what, id] of [
      ["fromMessageId", fromMessageId],
      ["toMessageId", toMessageId],
    ] as const) {
      checkText(id, what, PROVIDER, "postgres", "INVALID_INPUT", undefined);
    }
    // A retry of an addCompaction whose insert committed returns that overlay, not a second one.
    const newest = (await this.getCompactions()).at(-1);
    if (sameOverlay(newest, summary, fromMessageId, toMessageId)) return newest;
    const id = crypto.randomUUID();
    // clock_timestamp(), not NOW(): overlays are ordered by it, and "newest wins" needs distinct times.
    const [rows = []] = await this.#access.write([
      sql`INSERT INTO assistant_compactions
  (id, session_id, summary, from_message_id, to_message_id, created_at)
VALUES (${id}, ${this.#sessionId}, ${summary}, ${fromMessageId}, ${toMessageId}, clock_timestamp())
RETURNING created_at`,
    ]);
    return { id, summary, fromMessageId, toMessageId, createdAt: timeText(rows[0]?.created_at) };
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    const rows = await this.#read<{
      id: string;
      summary: string;
      from_message_id: string;
      to_message_id: string;
      created_at: unknown;
    }>(sql`SELECT id, summary, from_message_id, to_message_id, created_at FROM assistant_compactions
WHERE session_id = ${this.#sessionId} ORDER BY created_at, id`);
    return rows.map((row) => ({
      id: row.id,
      summary: row.summary,
      fromMessageId: row.from_message_id,
      toMessageId: row.to_message_id,
      createdAt: timeText(row.created_at),
    }));
  }

  async searchMessages(query: string, limit = 20): Promise<SearchResult[]> {
    return searchMessages((statement) => this.#read(statement), query, limit, this.#sessionId);
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  /**
   * A read: no session tables read as no rows (a read creates nothing). Session tables Cloudflare agents
   * created (without our columns and pointer table) are completed first, then the read runs again.
   */
  async #read<Row>(statement: SqlStatement): Promise<Row[]> {
    try {
      return await this.#client.run<Row>(statement);
    } catch (error) {
      if (this.#access.createTables && isMissingTable(error, SESSION_TABLES, "postgres")) {
        const [found] = await this.#client.run<{ present: boolean }>(
          sql`SELECT to_regclass('assistant_messages') IS NOT NULL AS present`,
        );
        if (found?.present === true) {
          await ensureTable(this.#client, SESSION_TABLES);
          return this.#client.run<Row>(statement);
        }
      }
      return this.#access.read(() => Promise.reject(error), []);
    }
  }

  /**
   * `statements` in one transaction that first locks the session's pointer row, so no append runs between
   * them (an append locks the same row). Creates the tables when they are missing.
   */
  #transaction(statements: readonly SqlStatement[]): Promise<unknown[][]> {
    const lock = sql`SELECT 1 FROM assistant_leaves WHERE session_id = ${this.#sessionId} FOR UPDATE`;
    return this.#access.write([lock, ...statements]);
  }

  /**
   * The CTE `leaf (id, depth)`: the given message, or the latest leaf. The latest leaf is the pointer row
   * when it still names a childless message of this session (two reads by key); otherwise (rows another
   * writer made) the newest childless message, found by a scan of the session that runs only then.
   */
  #leaf(leafId: string | null | undefined): SqlStatement {
    const session = this.#sessionId;
    if (leafId !== undefined && leafId !== null) {
      return sql`leaf AS (SELECT id, depth FROM assistant_messages WHERE session_id = ${session} AND id = ${leafId})`;
    }
    return sql`pointed AS MATERIALIZED (
  SELECT m.id, m.depth FROM assistant_leaves l CROSS JOIN LATERAL (
    SELECT id, depth FROM assistant_messages WHERE session_id = l.session_id AND id = l.leaf_id LIMIT 1
  ) m
  WHERE l.session_id = ${session} AND ${childless(sql`l.session_id`, sql`m.id`)}
),
leaf AS (
  SELECT id, depth FROM pointed
  UNION ALL
  (SELECT m.id, m.depth FROM assistant_messages m
   WHERE m.session_id = ${session} AND NOT EXISTS (SELECT 1 FROM pointed)
     AND ${childless(sql`m.session_id`, sql`m.id`)}
   ORDER BY m.position DESC LIMIT 1)
)`;
  }

  /**
   * The CTE `path (id, parent_id, content, step)` from `leaf` up to the root, bounded. Each step is a
   * `LATERAL … LIMIT 1` lookup by primary key: the fence keeps the planner from joining the whole session per
   * step when a new table's statistics are not gathered yet (that plan is quadratic in the path).
   */
  #path(content: SqlStatement): SqlStatement {
    const session = this.#sessionId;
    return sql`path (id, parent_id, content, step) AS (
  SELECT m.id, m.parent_id, ${content}, 0 FROM leaf CROSS JOIN LATERAL (
    SELECT id, parent_id, content FROM assistant_messages WHERE session_id = ${session} AND id = leaf.id LIMIT 1
  ) m
  UNION ALL
  SELECT m.id, m.parent_id, ${content}, p.step + 1 FROM path p CROSS JOIN LATERAL (
    SELECT id, parent_id, content FROM assistant_messages WHERE session_id = ${session} AND id = p.parent_id LIMIT 1
  ) m
  WHERE p.step < ${maximumPathLength}
)`;
  }

  /**
   * Inserts the message under its parent and moves the pointer, in ONE statement; returns `stored` (0 when
   * the given parent is not in this session, the id is stored in any session, or a message names it as its
   * parent).
   *
   * The pointer row is written first (`INSERT … ON CONFLICT DO UPDATE`), which takes its row lock; a
   * concurrent append of the same session waits there and then works on the row's newest version. So the
   * new message's parent and depth come from the locked pointer row (`parent_id = l.leaf_id`,
   * `depth = l.depth + 1`), never from the statement's snapshot, which predates the append it waited for.
   * The message insert reads them from the pointer upsert's `RETURNING`.
   *
   * Without a trusted pointer (a first append, rows another writer made, or a leaf that has a child in the
   * snapshot) the parent is the newest childless message of the session, its depth counted along the path
   * when not stored. Two first appends racing both insert the pointer; the second meets the first's row as
   * a conflict and chains under it.
   */
  #insertStatement(
    message: SessionMessage,
    content: string,
    text: string,
    parentId: string | null | undefined,
  ): SqlStatement {
    const session = this.#sessionId;
    // No stored message may have the new id (in any session: ids are unique per database) or name it as
    // its parent (a deleted id re-appended would close a cycle): then nothing is claimed and nothing
    // inserted. The id is looked up through `idx_assistant_msg_id`.
    const idFree = sql`NOT EXISTS (SELECT 1 FROM assistant_messages h WHERE h.id = ${message.id})
  AND NOT EXISTS (SELECT 1 FROM assistant_messages o WHERE o.session_id = ${session} AND o.parent_id = ${message.id})`;
    const inserted = sql`inserted AS (
  INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content, depth, context_text,
    tokens)
  SELECT ${message.id}, ${session}, claimed.parent_id, ${message.role}, ${content}, ${text}, claimed.depth,
    ${contextTextOf(session, sql`claimed.parent_id`)}, ${messageTokenStamp(message)}
  FROM claimed
  RETURNING id, parent_id, created_at
)
SELECT count(*)::int AS stored, max(parent_id) AS parent_id, max(created_at) AS created_at FROM inserted`;
    if (parentId === null) {
      return sql`WITH claimed AS (
  INSERT INTO assistant_leaves AS l (session_id, leaf_id, parent_id, depth)
  SELECT ${session}, ${message.id}, NULL, 0 WHERE ${idFree}
  ON CONFLICT (session_id) DO UPDATE SET leaf_id = excluded.leaf_id, parent_id = NULL, depth = 0
  RETURNING l.parent_id, l.depth
),
${inserted}`;
    }
    if (parentId !== undefined) {
      return sql`WITH RECURSIVE parent AS (
  SELECT id, depth FROM assistant_messages WHERE session_id = ${session} AND id = ${parentId}
),
${this.#counted()},
claimed AS (
  INSERT INTO assistant_leaves AS l (session_id, leaf_id, parent_id, depth)
  SELECT ${session}, ${message.id}, parent.id, coalesce(parent.depth, (SELECT max(step) FROM counted)) + 1
  FROM parent WHERE ${idFree}
  ON CONFLICT (session_id) DO UPDATE
    SET leaf_id = excluded.leaf_id, parent_id = excluded.parent_id, depth = excluded.depth
  RETURNING l.parent_id, l.depth
),
${inserted}`;
    }
    // The pointer at the snapshot: trusted while its leaf has no child (then no scan of the session runs).
    const trusted = sql`EXISTS (SELECT 1 FROM assistant_leaves p
  WHERE p.session_id = ${session} AND p.depth IS NOT NULL AND ${childless(sql`p.session_id`, sql`p.leaf_id`)})`;
    const pointerHolds = sql`l.depth IS NOT NULL AND ${childless(sql`l.session_id`, sql`l.leaf_id`)}`;
    return sql`WITH RECURSIVE scanned AS MATERIALIZED (
  SELECT m.id, m.depth FROM assistant_messages m
  WHERE NOT ${trusted} AND m.session_id = ${session} AND ${childless(sql`m.session_id`, sql`m.id`)}
  ORDER BY m.position DESC LIMIT 1
),
parent AS (SELECT id, depth FROM scanned),
${this.#counted()},
fallback AS (
  SELECT scanned.id, CASE WHEN scanned.id IS NULL THEN 0
    ELSE coalesce(scanned.depth, (SELECT max(step) FROM counted)) + 1 END AS depth
  FROM (SELECT 1) AS one LEFT JOIN scanned ON true
),
claimed AS (
  INSERT INTO assistant_leaves AS l (session_id, leaf_id, parent_id, depth)
  SELECT ${session}, ${message.id}, fallback.id, fallback.depth FROM fallback WHERE ${idFree}
  ON CONFLICT (session_id) DO UPDATE SET
    leaf_id = excluded.leaf_id,
    parent_id = CASE WHEN ${pointerHolds} THEN l.leaf_id ELSE excluded.parent_id END,
    depth = CASE WHEN ${pointerHolds} THEN l.depth + 1 ELSE excluded.depth END
  RETURNING l.parent_id, l.depth
),
${inserted}`;
  }

  /** The CTE `counted (id, parent_id, step)`: the path above `parent`, walked only when its depth is unknown. */
  #counted(): SqlStatement {
    const session = this.#sessionId;
    return sql`counted (id, parent_id, step) AS (
  SELECT m.id, m.parent_id, 0 FROM parent CROSS JOIN LATERAL (
    SELECT id, parent_id FROM assistant_messages WHERE session_id = ${session} AND id = parent.id LIMIT 1
  ) m
  WHERE parent.depth IS NULL
  UNION ALL
  SELECT m.id, m.parent_id, c.step + 1 FROM counted c CROSS JOIN LATERAL (
    SELECT id, parent_id FROM assistant_messages WHERE session_id = ${session} AND id = c.parent_id LIMIT 1
  ) m
  WHERE c.step < ${maximumPathLength}
)`;
  }
}

/**
 * "Message `id` has no child", as a scalar subquery: never turned into an anti-join over the session, so it
 * is one probe of `idx_assistant_msg_session_parent` per row whatever the table's statistics say.
 */
function childless(session: SqlStatement, id: SqlStatement): SqlStatement {
  return sql`(SELECT count(*) FROM (SELECT 1 FROM assistant_messages c
    WHERE c.session_id = ${session} AND c.parent_id = ${id} LIMIT 1) child) = 0`;
}

function invalidConfig(message: string): ContextError {
  return new ContextError("INVALID_CONFIG", `${PROVIDER}: ${message}`);
}

function missingParent(parentId: string, id: string): ContextError {
  return new ContextError(
    "NOT_FOUND",
    `appendMessage: parent "${parentId}" of message "${id}" is not in this session`,
  );
}

/** An id Postgres could hold: anything else names no stored message. */
function storableId(id: unknown): id is string {
  return typeof id === "string" && id.length > 0 && unstorable(id, "postgres") === null;
}

interface NodeRow {
  id: string;
  parent_id: string | null;
  role: string;
  created_at: unknown;
}

function nodeOf(row: NodeRow): MessageNode {
  return {
    id: row.id,
    parentId: row.parent_id,
    role: row.role,
    createdAt: row.created_at === null || row.created_at === undefined ? null : timeText(row.created_at),
  };
}

function sqlState(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}
