import { ContextError, describeValue } from "@contextblocks/core";
import {
  applyCompactions,
  checkMessageId,
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
import { type SqlClient, type SqlSource, type StatementObserver, sql, toSqlClient } from "@contextblocks/sql";
import { searchMessageIndex } from "./message-search.js";
import { SerialQueue } from "./serial-queue.js";
import { schemaReady } from "./session-schema.js";

/** Options of `SqliteSessionStore`. */
export interface SqliteSessionStoreOptions {
  /** Keeps this session's messages apart from others in the same tables. Default `""`, as `agents`. */
  sessionId?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
}

interface PathRow {
  id: string;
  parent_id: string | null;
  content: string;
  step: number;
}

interface NodeRow {
  id: string;
  parent_id: string | null;
  role: string;
  created_at: string | null;
}

function nodeOf(row: NodeRow): MessageNode {
  return { id: row.id, parentId: row.parent_id, role: row.role, createdAt: row.created_at ?? null };
}

interface LeafRow {
  id: string;
  depth: number | null;
}

/**
 * Session messages as a tree in SQLite (`assistant_messages` and friends, the tables of Cloudflare agents'
 * Sessions API, so either reads what the other wrote), over any `SqlSource`: `ctx.storage`, an Agent's `sql`, a better-sqlite3 `Database` or a `SqlClient`.
 *
 * Costs do not grow with the session where they need not: an append reads the latest leaf through a
 * pointer row and the parent by primary key; a path read walks `parent_id` from the leaf by primary key
 * (never the whole session); the path length is one row (`depth`).
 */
export class SqliteSessionStore implements SessionStore {
  readonly #client: SqlClient;
  readonly #sessionId: string;
  readonly #queue = new SerialQueue();

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
    this.#client = toSqlClient(source, { onStatement: options.onStatement });
    if (this.#client.dialect !== "sqlite") {
      throw new ContextError(
        "INVALID_CONFIG",
        `SqliteSessionStore needs a SQLite database; this client's dialect is "${this.#client.dialect}"`,
      );
    }
    this.#sessionId = options.sessionId ?? "";
  }

  /** The session this store reads and writes. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The client, for the session manager and context blocks on the same database. */
  get client(): SqlClient {
    return this.#client;
  }

  async getMessage(id: string): Promise<SessionMessage | null> {
    await this.#ready();
    const rows = await this.#client.query<{ content: string }>`
      SELECT content FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`;
    return rows[0] === undefined ? null : parseMessage(rows[0].content);
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    await this.#ready();
    const leaf = await this.#resolveLeaf(leafId);
    if (leaf === null) return [];
    const messages = await this.#readPath(leaf.id);
    const compactions = await this.getCompactions();
    return applyCompactions(messages, compactions);
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages = 1,
  ): Promise<RecentHistoryResult> {
    if (!Number.isFinite(maxBytes) || maxBytes < 0) {
      throw new ContextError(
        "INVALID_INPUT",
        `getRecentHistory: maxBytes must be a number ≥ 0, got ${maxBytes}`,
      );
    }
    await this.#ready();
    const leaf = await this.#resolveLeaf(leafId);
    if (leaf === null) return { messages: [], truncated: false, totalContentBytes: 0 };
    const floor = Math.max(1, Math.floor(minMessages));
    // Walks up from the leaf while the window is under its floor or the next message still fits: only
    // the window's rows are read, never the rest of the path.
    const rows = await this.#client.query<PathRow & { bytes: number; total: number }>`
      WITH RECURSIVE path(id, parent_id, step, total) AS (
        SELECT id, parent_id, 0, length(CAST(content AS BLOB)) FROM assistant_messages
          WHERE id = ${leaf.id} AND session_id = ${this.#sessionId}
        UNION ALL
        SELECT m.id, m.parent_id, p.step + 1, p.total + length(CAST(m.content AS BLOB))
          FROM assistant_messages m JOIN path p ON m.id = p.parent_id
          WHERE +m.session_id = ${this.#sessionId} AND p.step < ${maximumPathLength}
            AND (p.step + 1 < ${floor} OR p.total + length(CAST(m.content AS BLOB)) <= ${maxBytes})
      )
      SELECT m.id AS id, m.parent_id AS parent_id, m.content AS content, path.step AS step, path.total AS total
      FROM path CROSS JOIN assistant_messages m ON m.id = path.id`;
    const ordered = orderPath(rows);
    const oldest = ordered[0];
    const truncated =
      oldest !== undefined && oldest.parent_id !== null && (await this.#exists(oldest.parent_id));
    const total = rows.reduce((largest, row) => Math.max(largest, row.total), 0);
    const messages = parseAll(ordered);
    const compactions = await this.getCompactions();
    return { messages: applyCompactions(messages, compactions), truncated, totalContentBytes: total };
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    await this.#ready();
    const leaf = await this.#latestLeaf();
    return leaf === null ? null : this.getMessage(leaf.id);
  }

  async getNode(id: string): Promise<MessageNode | null> {
    await this.#ready();
    const rows = await this.#client.query<NodeRow>`
      SELECT id, parent_id, role, created_at FROM assistant_messages
      WHERE id = ${id} AND session_id = ${this.#sessionId}`;
    return rows[0] === undefined ? null : nodeOf(rows[0]);
  }

  async getTree(options: { limit?: number } = {}): Promise<MessageNode[]> {
    const limit = options.limit ?? -1;
    if (typeof limit !== "number" || Number.isNaN(limit) || (limit < 0 && options.limit !== undefined)) {
      throw new ContextError("INVALID_INPUT", `getTree: limit must be a number ≥ 0, got ${String(limit)}`);
    }
    await this.#ready();
    const rows = await this.#client.query<NodeRow>`
      SELECT id, parent_id, role, created_at FROM assistant_messages
      WHERE session_id = ${this.#sessionId} ORDER BY rowid ASC LIMIT ${Number.isFinite(limit) ? Math.floor(limit) : -1}`;
    return rows.map(nodeOf);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    await this.#ready();
    const rows = await this.#client.query<{ content: string }>`
      SELECT content FROM assistant_messages INDEXED BY idx_assistant_msg_parent
      WHERE parent_id = ${messageId} AND session_id = ${this.#sessionId}
      ORDER BY created_at ASC, rowid ASC`;
    return parseAll(rows);
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    await this.#ready();
    const leaf = await this.#resolveLeaf(leafId);
    if (leaf === null) return 0;
    return (await this.#depthOf(leaf)) + 1;
  }

  async appendMessage(message: SessionMessage, parentId?: string | null): Promise<void> {
    const checked = checkSessionMessage(message, "appendMessage");
    if (parentId !== undefined && parentId !== null) checkMessageId(parentId, "parentId", "appendMessage");
    if (parentId === checked.id) {
      throw new ContextError(
        "INVALID_INPUT",
        `appendMessage: message "${checked.id}" cannot be its own parent`,
      );
    }
    const content = serialize(checked);
    return this.#queue.run(() => this.#append(checked, content, parentId));
  }

  async #append(
    message: SessionMessage,
    content: string,
    parentId: string | null | undefined,
  ): Promise<void> {
    await this.#ready();
    const existing = await this.#client.query<{ session_id: string }>`
      SELECT session_id FROM assistant_messages WHERE id = ${message.id}`;
    if (existing[0] !== undefined) {
      const where = existing[0].session_id === this.#sessionId ? "this session" : "another session";
      throw new ContextError(
        "INVALID_INPUT",
        `appendMessage: a message with id "${message.id}" already exists in ${where}; use updateMessage to change it`,
      );
    }
    let parent: LeafRow | null;
    if (parentId === undefined) {
      parent = await this.#latestLeaf();
    } else if (parentId === null) {
      parent = null;
    } else {
      parent = await this.#row(parentId);
      if (parent === null) {
        throw new ContextError(
          "NOT_FOUND",
          `appendMessage: parent "${parentId}" of message "${message.id}" is not in this session`,
        );
      }
    }
    const depth = parent === null ? 0 : (await this.#depthOf(parent)) + 1;
    const text = textOfMessage(message);
    const statements = [
      sql`INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth)
        VALUES (${message.id}, ${this.#sessionId}, ${parent?.id ?? null}, ${message.role}, ${content}, ${depth})`,
      sql`INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (${this.#sessionId}, ${message.id})
        ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`,
    ];
    if (text.length > 0) statements.push(indexStatement(message.id, text));
    await this.#client.batch(statements);
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    const content = serialize(checked);
    return this.#queue.run(async () => {
      await this.#ready();
      const row = await this.#rowid(checked.id);
      if (row === null) {
        throw new ContextError("NOT_FOUND", `updateMessage: no message "${checked.id}" in this session`);
      }
      const text = textOfMessage(checked);
      const statements = [
        sql`UPDATE assistant_messages SET content = ${content}, role = ${checked.role}
          WHERE id = ${checked.id} AND session_id = ${this.#sessionId}`,
        ...(await this.#unindexStatements(checked.id, row)),
      ];
      if (text.length > 0) statements.push(indexStatement(checked.id, text));
      await this.#client.batch(statements);
    });
  }

  async deleteMessages(messageIds: readonly string[]): Promise<void> {
    if (!Array.isArray(messageIds)) {
      throw new ContextError(
        "INVALID_INPUT",
        `deleteMessages: expected an array of ids, got ${describeValue(messageIds)}`,
      );
    }
    return this.#queue.run(async () => {
      await this.#ready();
      for (const id of messageIds) {
        if (typeof id !== "string") continue;
        const row = await this.#rowid(id);
        if (row === null) continue;
        await this.#client.batch([
          ...(await this.#unindexStatements(id, row)),
          // Descendants keep their parent link (as in agents) but their depth no longer holds.
          sql`UPDATE assistant_messages SET depth = NULL WHERE id IN (
            WITH RECURSIVE below(id) AS (
              SELECT id FROM assistant_messages WHERE parent_id = ${id} AND session_id = ${this.#sessionId}
              UNION ALL
              SELECT m.id FROM assistant_messages m JOIN below b ON m.parent_id = b.id
                WHERE +m.session_id = ${this.#sessionId}
            ) SELECT id FROM below)`,
          sql`DELETE FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`,
          sql`DELETE FROM assistant_leaves WHERE session_id = ${this.#sessionId} AND leaf_id = ${id}`,
        ]);
      }
    });
  }

  clearMessages(): Promise<void> {
    return this.#queue.run(async () => {
      await this.#ready();
      await this.#client.batch([
        sql`DELETE FROM assistant_messages WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_compactions WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_fts WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_leaves WHERE session_id = ${this.#sessionId}`,
      ]);
    });
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
  ): Promise<StoredCompaction> {
    if (typeof summary !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `addCompaction: summary must be a string, got ${describeValue(summary)}`,
      );
    }
    checkMessageId(fromMessageId, "fromMessageId", "addCompaction");
    checkMessageId(toMessageId, "toMessageId", "addCompaction");
    return this.#queue.run(async () => {
      await this.#ready();
      const id = crypto.randomUUID();
      const rows = await this.#client.query<{ created_at: string }>`
        INSERT INTO assistant_compactions (id, session_id, summary, from_message_id, to_message_id)
        VALUES (${id}, ${this.#sessionId}, ${summary}, ${fromMessageId}, ${toMessageId})
        RETURNING created_at`;
      return {
        id,
        summary,
        fromMessageId,
        toMessageId,
        createdAt: rows[0]?.created_at ?? new Date().toISOString(),
      };
    });
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    await this.#ready();
    const rows = await this.#client.query<{
      id: string;
      summary: string;
      from_message_id: string;
      to_message_id: string;
      created_at: string;
    }>`SELECT id, summary, from_message_id, to_message_id, created_at FROM assistant_compactions
      WHERE session_id = ${this.#sessionId} ORDER BY created_at ASC, rowid ASC`;
    return rows.map((row) => ({
      id: row.id,
      summary: row.summary,
      fromMessageId: row.from_message_id,
      toMessageId: row.to_message_id,
      createdAt: row.created_at,
    }));
  }

  async searchMessages(query: string, limit = 20): Promise<SearchResult[]> {
    await this.#ready();
    return searchMessageIndex(this.#client, query, { limit, sessionId: this.#sessionId });
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  #ready(): Promise<void> {
    return schemaReady(this.#client);
  }

  async #resolveLeaf(leafId: string | null | undefined): Promise<LeafRow | null> {
    if (leafId === undefined || leafId === null) return this.#latestLeaf();
    return this.#row(leafId);
  }

  async #row(id: string): Promise<LeafRow | null> {
    const rows = await this.#client.query<LeafRow>`
      SELECT id, depth FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`;
    return rows[0] ?? null;
  }

  async #rowid(id: string): Promise<number | null> {
    const rows = await this.#client.query<{ rowid: number }>`
      SELECT rowid FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`;
    return rows[0]?.rowid ?? null;
  }

  async #exists(id: string): Promise<boolean> {
    return (await this.#row(id)) !== null;
  }

  /**
   * The latest leaf: the pointer row when it still names a childless message of this session (two indexed
   * reads), else the newest childless message found by a scan of the session, which is then remembered.
   * The scan only runs on data another writer changed (or the first time on a database `agents` wrote).
   */
  async #latestLeaf(): Promise<LeafRow | null> {
    const pointed = await this.#client.query<LeafRow>`
      SELECT m.id AS id, m.depth AS depth FROM assistant_leaves l
      JOIN assistant_messages m ON m.id = l.leaf_id AND m.session_id = l.session_id
      WHERE l.session_id = ${this.#sessionId}
        AND NOT EXISTS (SELECT 1 FROM assistant_messages c INDEXED BY idx_assistant_msg_parent
          WHERE c.parent_id = m.id AND c.session_id = m.session_id)`;
    if (pointed[0] !== undefined) return pointed[0];
    const found = await this.#client.query<LeafRow>`
      SELECT m.id AS id, m.depth AS depth FROM assistant_messages m
      WHERE m.session_id = ${this.#sessionId}
        AND NOT EXISTS (SELECT 1 FROM assistant_messages c INDEXED BY idx_assistant_msg_parent
          WHERE c.parent_id = m.id AND c.session_id = m.session_id)
      ORDER BY m.created_at DESC, m.rowid DESC LIMIT 1`;
    const leaf = found[0] ?? null;
    if (leaf !== null) {
      await this.#client.query`
        INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (${this.#sessionId}, ${leaf.id})
        ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`;
    }
    return leaf;
  }

  /** The depth of a row: stored, or counted along its path once (rows another writer made) and stored. */
  async #depthOf(row: LeafRow): Promise<number> {
    if (typeof row.depth === "number") return row.depth;
    const counted = await this.#client.query<{ count: number }>`
      WITH RECURSIVE path(id, parent_id, step) AS (
        SELECT id, parent_id, 0 FROM assistant_messages WHERE id = ${row.id} AND session_id = ${this.#sessionId}
        UNION ALL
        SELECT m.id, m.parent_id, p.step + 1 FROM assistant_messages m JOIN path p ON m.id = p.parent_id
          WHERE +m.session_id = ${this.#sessionId} AND p.step < ${maximumPathLength}
      )
      SELECT COUNT(*) AS count FROM path`;
    const depth = Math.max(0, Number(counted[0]?.count ?? 1) - 1);
    await this.#client.query`
      UPDATE assistant_messages SET depth = ${depth} WHERE id = ${row.id} AND session_id = ${this.#sessionId}`;
    return depth;
  }

  /** The path root..leaf, content included, in one statement; ordered here, not by an SQL sorter. */
  async #readPath(leafId: string): Promise<SessionMessage[]> {
    const rows = await this.#client.query<PathRow>`
      WITH RECURSIVE path(id, parent_id, step) AS (
        SELECT id, parent_id, 0 FROM assistant_messages WHERE id = ${leafId} AND session_id = ${this.#sessionId}
        UNION ALL
        SELECT m.id, m.parent_id, p.step + 1 FROM assistant_messages m JOIN path p ON m.id = p.parent_id
          WHERE +m.session_id = ${this.#sessionId} AND p.step < ${maximumPathLength}
      )
      SELECT m.id AS id, m.parent_id AS parent_id, m.content AS content, path.step AS step
      FROM path CROSS JOIN assistant_messages m ON m.id = path.id`;
    return parseAll(orderPath(rows));
  }

  /** Statements that remove a message's FTS row: by rowid when we indexed it, else by id (a scan). */
  async #unindexStatements(id: string, rowid: number) {
    const indexed = await this.#client.query<{
      id: string;
    }>`SELECT id FROM assistant_fts WHERE rowid = ${rowid}`;
    if (indexed[0]?.id === id) return [sql`DELETE FROM assistant_fts WHERE rowid = ${rowid}`];
    return [sql`DELETE FROM assistant_fts WHERE id = ${id} AND session_id = ${this.#sessionId}`];
  }
}

/**
 * The FTS row of a message, under the message's own rowid when that is free. Cloudflare agents' Sessions
 * API re-indexes an updated message under the next free rowid, so on a database it wrote the message's
 * rowid may hold another message's row: then the row takes the next free rowid (NULL), and removal finds it
 * by id (`#unindexStatements`).
 */
function indexStatement(id: string, text: string) {
  return sql`INSERT INTO assistant_fts (rowid, id, session_id, role, content)
    SELECT CASE WHEN EXISTS (SELECT 1 FROM assistant_fts f WHERE f.rowid = m.rowid) THEN NULL ELSE m.rowid END,
      m.id, m.session_id, m.role, ${text} FROM assistant_messages m WHERE m.id = ${id}`;
}
