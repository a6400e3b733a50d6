import { ContextError } from "@contextblocks/core";
import { planQuery } from "@contextblocks/fts5";
import {
  applyCompactions,
  checkSessionMessage,
  type MessageNode,
  maximumPathLength,
  orderPath,
  parseStoredMessages as parseAll,
  parseStoredMessage as parseMessage,
  type RecentHistoryResult,
  type SearchResult,
  type SessionMessage,
  type SessionStore,
  type StoredCompaction,
  serializeMessage as serialize,
  textOfMessage,
} from "@contextblocks/sessions";
import { type SqlClient, type SqlStatement, type StatementObserver, sql } from "@contextblocks/sql";
import { type PostgresSource, postgresClient } from "./client.js";
import { messageSearchStatement } from "./message-search-statement.js";
import { withTables } from "./schema.js";
import { checkStorable, indexableText, isStorable, kindOf } from "./text-checks.js";

const PROVIDER = "PostgresSessionProvider";

/** Options of `PostgresSessionProvider`. */
export interface PostgresSessionProviderOptions {
  /** Keeps this session's messages apart from others in the same tables. Default `""`, as `agents`. */
  sessionId?: string | undefined;
  /** Create the tables on first use when they are missing. Default `true`; `false` when schema.sql was run. */
  createTables?: boolean | undefined;
  /** Per-statement report (`changes` for writes). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

/** Most search hits one call returns, as in `@contextblocks/sessions`. */
const maximumSearchLimit = 1_000;

interface MessageRow {
  content: string;
}

interface PathRow extends MessageRow {
  id: string;
  step: number;
}

/**
 * Session messages as a tree in Postgres, in the `assistant_messages` and `assistant_compactions` tables of
 * Cloudflare agents' Sessions API
 * (plus a `depth` and a `position` column and an `assistant_leaves` pointer table, see `POSTGRES_SCHEMA`),
 * with the behaviour of `SqliteSessionStore` in `@contextblocks/sqlite`.
 *
 * - An append is one transaction: a transaction-scoped advisory lock on the session, then one statement
 *   that finds the parent (the latest-leaf pointer, or the given id, by primary key), inserts the message
 *   with its depth and moves the pointer. Appends from any number of connections therefore chain; none
 *   forks or is lost. (Under the default READ COMMITTED isolation, the statement after the lock sees every
 *   append committed before it.)
 * - A path read is one recursive statement that walks `parent_id` up from the leaf by primary key: its cost
 *   grows with the path, never with the session. The path length is the leaf's stored `depth` (one row).
 * - Search is Postgres full-text over `content_tsv` (GIN), with fts5's query planning.
 */
export class PostgresSessionProvider implements SessionStore {
  readonly #client: SqlClient;
  readonly #sessionId: string;
  readonly #createTables: boolean;

  constructor(source: PostgresSource, sessionIdOrOptions?: string | PostgresSessionProviderOptions) {
    const options: PostgresSessionProviderOptions =
      typeof sessionIdOrOptions === "string" ? { sessionId: sessionIdOrOptions } : (sessionIdOrOptions ?? {});
    if (typeof options !== "object" || options === null) {
      throw invalidConfig(
        `the second argument must be a session id or an options object, got ${kindOf(options)}`,
      );
    }
    const { sessionId = "", createTables = true } = options;
    if (typeof sessionId !== "string") {
      throw invalidConfig(`the session id must be a string, got ${kindOf(sessionId)}`);
    }
    checkStorable(sessionId, "session id", PROVIDER, "INVALID_CONFIG", undefined);
    if (typeof createTables !== "boolean") {
      throw invalidConfig(`createTables must be a boolean, got ${kindOf(createTables)}`);
    }
    this.#client = postgresClient(source, options.onStatement, PROVIDER);
    this.#sessionId = sessionId;
    this.#createTables = createTables;
  }

  /** The session this provider reads and writes. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The client, for context blocks on the same database. */
  get client(): SqlClient {
    return this.#client;
  }

  async getNode(id: string): Promise<MessageNode | null> {
    if (!storableId(id)) return null;
    const rows = await this.#run<NodeRow>(
      sql`SELECT id, parent_id, role, created_at FROM assistant_messages
        WHERE session_id = ${this.#sessionId} AND id = ${id}`,
    );
    return rows[0] === undefined ? null : nodeOf(rows[0]);
  }

  async getTree(options: { limit?: number } = {}): Promise<MessageNode[]> {
    const limit = options.limit;
    if (limit !== undefined && (typeof limit !== "number" || Number.isNaN(limit) || limit < 0)) {
      throw new ContextError("INVALID_INPUT", `getTree: limit must be a number ≥ 0, got ${String(limit)}`);
    }
    const rows = await this.#run<NodeRow>(
      limit === undefined || !Number.isFinite(limit)
        ? sql`SELECT id, parent_id, role, created_at FROM assistant_messages
            WHERE session_id = ${this.#sessionId} ORDER BY position`
        : sql`SELECT id, parent_id, role, created_at FROM assistant_messages
            WHERE session_id = ${this.#sessionId} ORDER BY position LIMIT ${Math.floor(limit)}`,
    );
    return rows.map(nodeOf);
  }

  async getMessage(id: string): Promise<SessionMessage | null> {
    if (!storableId(id)) return null;
    const rows = await this.#run<MessageRow>(
      sql`SELECT content FROM assistant_messages WHERE session_id = ${this.#sessionId} AND id = ${id}`,
    );
    return rows[0] === undefined ? null : parseMessage(rows[0].content);
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    if (leafId !== undefined && leafId !== null && !storableId(leafId)) return [];
    const [rows, compactions] = await Promise.all([
      this.#run<PathRow>(sql`WITH RECURSIVE ${this.#leaf(leafId)},
${this.#path(sql`m.content`)}
SELECT id, step, content FROM path`),
      this.getCompactions(),
    ]);
    return applyCompactions(parseAll(orderPath(rows)), compactions);
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages = 1,
  ): Promise<RecentHistoryResult> {
    if (typeof maxBytes !== "number" || !Number.isFinite(maxBytes) || maxBytes < 0) {
      throw new ContextError(
        "INVALID_INPUT",
        `getRecentHistory: maxBytes must be a number ≥ 0, got ${String(maxBytes)}`,
      );
    }
    if (leafId !== undefined && leafId !== null && !storableId(leafId)) {
      return { messages: [], truncated: false, totalContentBytes: 0 };
    }
    const floor = Math.max(1, Math.floor(Number(minMessages) || 1));
    // Walks up while the window is under its floor or the next message still fits: only the window's rows
    // are read. `older` tells whether a stored message lies beyond the window.
    const [rows, compactions] = await Promise.all([
      this.#run<
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
    const rows = await this.#run<MessageRow>(sql`WITH ${this.#leaf(undefined)}
SELECT m.content FROM leaf CROSS JOIN LATERAL (
  SELECT content FROM assistant_messages WHERE session_id = ${this.#sessionId} AND id = leaf.id LIMIT 1
) m`);
    return rows[0] === undefined ? null : parseMessage(rows[0].content);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    if (!storableId(messageId)) return [];
    const rows = await this.#run<MessageRow>(sql`SELECT content FROM assistant_messages
WHERE session_id = ${this.#sessionId} AND parent_id = ${messageId} ORDER BY position`);
    return parseAll(rows);
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    if (leafId !== undefined && leafId !== null && !storableId(leafId)) return 0;
    const rows = await this.#run<{ id: string; depth: number | null }>(
      sql`WITH ${this.#leaf(leafId)} SELECT id, depth FROM leaf`,
    );
    const leaf = rows[0];
    if (leaf === undefined) return 0;
    if (typeof leaf.depth === "number") return leaf.depth + 1;
    // A row another writer made: counted along its path once, then stored.
    const counted = await this.#run<{
      steps: number;
    }>(sql`WITH RECURSIVE leaf (id) AS (SELECT ${leaf.id}::text),
${this.#path(sql`NULL::text`)}
SELECT count(*)::int AS steps FROM path`);
    const depth = Math.max(0, (counted[0]?.steps ?? 1) - 1);
    await this.#run(sql`UPDATE assistant_messages SET depth = ${depth}
WHERE session_id = ${this.#sessionId} AND id = ${leaf.id} AND depth IS NULL`);
    return depth + 1;
  }

  async appendMessage(message: SessionMessage, parentId?: string | null): Promise<void> {
    const checked = checkSessionMessage(message, "appendMessage");
    checkStorable(checked.id, "message id", PROVIDER, "INVALID_INPUT", undefined);
    checkStorable(checked.role, "role", PROVIDER, "INVALID_INPUT", undefined);
    if (parentId !== undefined && parentId !== null) {
      if (typeof parentId !== "string" || parentId.length === 0) {
        throw new ContextError(
          "INVALID_INPUT",
          `appendMessage: parentId must be a non-empty string, null or omitted, got ${kindOf(parentId)}`,
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
    let results: unknown[][];
    try {
      results = await this.#transaction([insert]);
    } catch (error) {
      if (sqlState(error) === "23505") {
        throw new ContextError(
          "INVALID_INPUT",
          `appendMessage: a message with id "${checked.id}" already exists in this session; use updateMessage to change it`,
          { cause: error },
        );
      }
      throw error;
    }
    const stored = Number((results[1]?.[0] as { stored?: unknown } | undefined)?.stored ?? 0);
    if (stored === 0 && typeof parentId === "string") throw missingParent(parentId, checked.id);
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    const content = serialize(checked);
    checkStorable(checked.role, "role", PROVIDER, "INVALID_INPUT", undefined);
    const text = indexableText(textOfMessage(checked));
    const rows = storableId(checked.id)
      ? await this.#run(sql`UPDATE assistant_messages
SET content = ${content}, role = ${checked.role}, text_content = ${text}
WHERE session_id = ${this.#sessionId} AND id = ${checked.id} RETURNING id`)
      : [];
    if (rows.length === 0) {
      throw new ContextError("NOT_FOUND", `updateMessage: no message "${checked.id}" in this session`);
    }
  }

  async deleteMessages(messageIds: readonly string[]): Promise<void> {
    if (!Array.isArray(messageIds)) {
      throw new ContextError(
        "INVALID_INPUT",
        `deleteMessages: expected an array of ids, got ${kindOf(messageIds)}`,
      );
    }
    const ids = messageIds.filter((id): id is string => typeof id === "string" && storableId(id));
    if (ids.length === 0) return;
    const list = JSON.stringify(ids);
    const session = this.#sessionId;
    await this.#transaction([
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
      sql`INSERT INTO assistant_leaves (session_id, leaf_id)
SELECT ${session}, m.id FROM assistant_messages m
WHERE m.session_id = ${session}
  AND NOT EXISTS (SELECT 1 FROM assistant_leaves l WHERE l.session_id = ${session})
  AND ${childless(sql`m.session_id`, sql`m.id`)}
ORDER BY m.position DESC LIMIT 1`,
    ]);
  }

  async clearMessages(): Promise<void> {
    const session = this.#sessionId;
    await this.#transaction([
      sql`DELETE FROM assistant_messages WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_compactions WHERE session_id = ${session}`,
      sql`DELETE FROM assistant_leaves WHERE session_id = ${session}`,
    ]);
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
  ): Promise<StoredCompaction> {
    if (typeof summary !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `addCompaction: summary must be a string, got ${kindOf(summary)}`,
      );
    }
    checkStorable(summary, "summary", PROVIDER, "INVALID_INPUT", undefined);
    for (const [what, id] of [
      ["fromMessageId", fromMessageId],
      ["toMessageId", toMessageId],
    ] as const) {
      if (typeof id !== "string" || id.length === 0) {
        throw new ContextError(
          "INVALID_INPUT",
          `addCompaction: ${what} must be a non-empty string, got ${kindOf(id)}`,
        );
      }
      checkStorable(id, what, PROVIDER, "INVALID_INPUT", undefined);
    }
    const id = crypto.randomUUID();
    // clock_timestamp(), not NOW(): overlays are ordered by it, and "newest wins" needs distinct times.
    const rows = await this.#run<{ created_at: unknown }>(sql`INSERT INTO assistant_compactions
  (id, session_id, summary, from_message_id, to_message_id, created_at)
VALUES (${id}, ${this.#sessionId}, ${summary}, ${fromMessageId}, ${toMessageId}, clock_timestamp())
RETURNING created_at`);
    return { id, summary, fromMessageId, toMessageId, createdAt: timeText(rows[0]?.created_at) };
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    const rows = await this.#run<{
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
    if (typeof query !== "string") {
      throw new ContextError("INVALID_INPUT", `search: the query must be a string, got ${kindOf(query)}`);
    }
    const count = Math.floor(Number(limit));
    if (!Number.isFinite(count) || count < 1 || count > maximumSearchLimit) {
      throw new ContextError(
        "INVALID_INPUT",
        `search: limit must be a whole number from 1 to ${maximumSearchLimit}, got ${String(limit)}`,
      );
    }
    const plan = planQuery(query);
    if (plan === null) return [];
    const rows = await this.#run<{ id: string; role: string; content: string; created_at: unknown }>(
      messageSearchStatement(this.#sessionId, plan, count),
    );
    const results: SearchResult[] = [];
    for (const row of rows) {
      const message = parseMessage(row.content);
      if (message === null) continue;
      const result: SearchResult = { id: row.id, role: row.role, content: textOfMessage(message) };
      if (row.created_at !== null && row.created_at !== undefined)
        result.createdAt = timeText(row.created_at);
      results.push(result);
    }
    return results;
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  #run<Row>(statement: SqlStatement): Promise<Row[]> {
    return withTables(this.#client, this.#createTables, PROVIDER, () => this.#client.run<Row>(statement));
  }

  /** `statements` in one transaction behind the session's advisory lock (the lock's rows come first). */
  #transaction(statements: readonly SqlStatement[]): Promise<unknown[][]> {
    const lock = sql`SELECT pg_advisory_xact_lock(1667396712, hashtext(${this.#sessionId}))`;
    return withTables(this.#client, this.#createTables, PROVIDER, () =>
      this.#client.batch([lock, ...statements]),
    );
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
   * Inserts the message under its parent and moves the pointer, in one statement; returns `stored` (0 when
   * the given parent is not in this session). The depth is the parent's plus one, counted along the path
   * when the parent's is not stored (a row another writer made).
   */
  #insertStatement(
    message: SessionMessage,
    content: string,
    text: string,
    parentId: string | null | undefined,
  ): SqlStatement {
    const session = this.#sessionId;
    const parent =
      parentId === undefined
        ? sql`${this.#leaf(undefined)}, parent AS (SELECT id, depth FROM leaf)`
        : parentId === null
          ? sql`parent (id, depth) AS (SELECT NULL::text, NULL::integer WHERE false)`
          : sql`parent AS (SELECT id, depth FROM assistant_messages WHERE session_id = ${session} AND id = ${parentId})`;
    const source =
      typeof parentId === "string" ? sql`FROM parent` : sql`FROM (SELECT 1) AS one LEFT JOIN parent ON true`;
    return sql`WITH RECURSIVE ${parent},
counted (id, parent_id, step) AS (
  SELECT m.id, m.parent_id, 0 FROM parent CROSS JOIN LATERAL (
    SELECT id, parent_id FROM assistant_messages WHERE session_id = ${session} AND id = parent.id LIMIT 1
  ) m
  WHERE parent.depth IS NULL
  UNION ALL
  SELECT m.id, m.parent_id, c.step + 1 FROM counted c CROSS JOIN LATERAL (
    SELECT id, parent_id FROM assistant_messages WHERE session_id = ${session} AND id = c.parent_id LIMIT 1
  ) m
  WHERE c.step < ${maximumPathLength}
),
inserted AS (
  INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content, depth)
  SELECT ${message.id}, ${session}, parent.id, ${message.role}, ${content}, ${text},
    CASE WHEN parent.id IS NULL THEN 0
      ELSE coalesce(parent.depth, (SELECT max(step) FROM counted)) + 1 END
  ${source}
  RETURNING id
),
pointer AS (
  INSERT INTO assistant_leaves (session_id, leaf_id) SELECT ${session}, id FROM inserted
  ON CONFLICT (session_id) DO UPDATE SET leaf_id = excluded.leaf_id
)
SELECT count(*)::int AS stored FROM inserted`;
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
  return typeof id === "string" && id.length > 0 && isStorable(id);
}

function sqlState(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/** A timestamp as ISO text (drivers return a `Date`; a string is kept). */
function timeText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string") return value;
  return new Date().toISOString();
}

interface NodeRow {
  id: string;
  parent_id: string | null;
  role: string;
  created_at: string | Date | null;
}

function nodeOf(row: NodeRow): MessageNode {
  const created = row.created_at;
  return {
    id: row.id,
    parentId: row.parent_id,
    role: row.role,
    createdAt: created === null ? null : created instanceof Date ? created.toISOString() : String(created),
  };
}
