import { ContextError, describeValue } from "@contextblocks/core";
import {
  applyCompactions,
  checkCompactionArguments,
  checkMessageId,
  checkRecentHistoryBudget,
  checkSessionMessage,
  checkWholePath,
  type MessageNode,
  maximumPathLength,
  orderPath,
  parseStoredMessage as parseMessage,
  type RecentHistoryResult,
  type SearchResult,
  type SessionMessage,
  type SessionStore,
  type StoredCompaction,
  sameOverlay,
  serializeMessage as serialize,
} from "@contextblocks/sessions";
import {
  raw,
  type SqlClient,
  type SqlSource,
  type SqlStatement,
  type StatementObserver,
  sql,
  toSqlClient,
} from "@contextblocks/sql";
import { readLeanPath } from "./lean-path.js";
import { cachedTail, currentTail, readTail, rememberTail, tailStill } from "./lean-tail.js";
import { catchUpMessageIndex, readContinuations } from "./message-index.js";
import { indexedMessageOf } from "./message-index-text.js";
import { sliceStoredMessage } from "./message-rows.js";
import {
  hasContextColumn,
  indexMessageStatement,
  refreshContextStatements,
  searchMessageIndex,
} from "./message-search.js";
import { SerialQueue } from "./serial-queue.js";
import { forgetLayout, leanLayoutStill, type SessionLayout, schemaReady } from "./session-schema.js";

/** Options of `SqliteSessionStore`. */
export interface SqliteSessionStoreOptions {
  /** Keeps this session's messages apart from others in the same tables. Default `""`, as `agents`. */
  sessionId?: string | undefined;
  /** Per-statement report (rows read and written on Durable Objects). Not for a ready `SqlClient`. */
  onStatement?: StatementObserver | undefined;
  /**
   * Writes each message's search row on append, as agents@0.22.0's `agents/experimental/memory/session`
   * does, so that version's `searchMessages` finds what this store wrote on a shared database. Default
   * `false`: the index is built lazily at search time and an append writes no search row (billed rows on a
   * Durable Object).
   */
  indexOnAppend?: boolean | undefined;
}

interface PathRow {
  id: string;
  parent_id: string | null;
  content: string;
  content_chunks: number | null;
  step: number;
}

interface ContentRow {
  id: string;
  content: string;
  content_chunks: number | null;
}

/** How many times an append re-reads the latest leaf when another writer moved it meanwhile. */
const appendAttempts = 50;

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
  /** Read on the lean layout, where a path is walked by rowid. */
  rowid?: number | undefined;
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
  readonly #indexOnAppend: boolean;

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
    this.#indexOnAppend = options.indexOnAppend === true;
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
    const rows = await this.#client.query<ContentRow>`
      SELECT id, content, content_chunks FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`;
    return (await this.#parseRows(rows))[0] ?? null;
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    const layout = await this.#ready();
    const leaf = await this.#resolveLeaf(leafId, layout);
    if (leaf === null) return [];
    const messages = layout === "lean" ? await this.#readLeanPath(leaf) : await this.#readPath(leaf.id);
    const compactions = await this.getCompactions();
    return applyCompactions(messages, compactions);
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages = 1,
  ): Promise<RecentHistoryResult> {
    checkRecentHistoryBudget(maxBytes);
    const layout = await this.#ready();
    const leaf = await this.#resolveLeaf(leafId, layout);
    if (leaf === null) return { messages: [], truncated: false, totalContentBytes: 0 };
    const floor = Math.max(1, Math.floor(minMessages));
    // Walks up from the leaf while the window is under its floor or the next message still fits: only
    // the window's rows are read, never the rest of the path.
    if (layout === "lean") return this.#leanRecentHistory(leaf, floor, maxBytes);
    const rows = (await this.#one(sql`
      WITH RECURSIVE path(id, parent_id, step, total) AS (
        SELECT id, parent_id, 0, length(CAST(content AS BLOB)) + ${chunkBytes("assistant_messages")}
          FROM assistant_messages WHERE id = ${leaf.id} AND session_id = ${this.#sessionId}
        UNION ALL
        SELECT m.id, m.parent_id, p.step + 1, p.total + length(CAST(m.content AS BLOB)) + ${chunkBytes("m")}
          FROM assistant_messages m JOIN path p ON m.id = p.parent_id
          WHERE +m.session_id = ${this.#sessionId} AND p.step < ${maximumPathLength}
            AND (p.step + 1 < ${floor}
              OR p.total + length(CAST(m.content AS BLOB)) + ${chunkBytes("m")} <= ${maxBytes})
      )
      SELECT m.id AS id, m.parent_id AS parent_id, m.content AS content, m.content_chunks AS content_chunks,
        path.step AS step, path.total AS total
      FROM path CROSS JOIN assistant_messages m ON m.id = path.id`)) as unknown as (PathRow & {
      total: number;
    })[];
    const ordered = orderPath(rows);
    const oldest = ordered[0];
    const truncated =
      oldest !== undefined && oldest.parent_id !== null && (await this.#exists(oldest.parent_id));
    const total = rows.reduce((largest, row) => Math.max(largest, row.total), 0);
    const messages = await this.#parseRows(ordered);
    const compactions = await this.getCompactions();
    return { messages: applyCompactions(messages, compactions), truncated, totalContentBytes: total };
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    const layout = await this.#ready();
    if (layout === "lean") {
      // The remembered tail's row, read only while it is still the tail (one statement, one row).
      const cached = cachedTail(this.#client, this.#sessionId);
      if (cached?.leaf !== null && cached?.leaf !== undefined) {
        const rows = (await this.#one(sql`
          SELECT id, content, content_chunks FROM assistant_messages
          WHERE rowid = ${cached.leaf.rowid} AND id = ${cached.leaf.id} AND ${tailStill({ ...cached, leaf: null }, this.#sessionId)}`)) as unknown as ContentRow[];
        if (rows.length > 0) return (await this.#parseRows(rows))[0] ?? null;
      }
      const leaf = (await readTail(this.#client, this.#sessionId)).leaf;
      if (leaf === null) return null;
      const rows = await this.#client.query<ContentRow>`
        SELECT id, content, content_chunks FROM assistant_messages WHERE rowid = ${leaf.rowid}`;
      return (await this.#parseRows(rows))[0] ?? null;
    }
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
    const layout = await this.#ready();
    // The lean layout has no parent index: a scan of the table (branches are read rarely).
    const rows = (await this.#one(sql`
      SELECT id, content, content_chunks FROM assistant_messages ${layout === "lean" ? raw("") : raw("INDEXED BY idx_assistant_msg_parent")}
      WHERE parent_id = ${messageId} AND session_id = ${this.#sessionId}
      ORDER BY created_at ASC, rowid ASC`)) as unknown as ContentRow[];
    return this.#parseRows(rows);
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    const layout = await this.#ready();
    const leaf = await this.#resolveLeaf(leafId, layout);
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
    const slices = sliceStoredMessage(content, checked.id);
    return this.#queue.run(() => this.#append(checked, content, slices, parentId));
  }

  /**
   * One conditional INSERT is the commit point: it stores the message only if its parent is still what
   * was read (the latest leaf still childless, an explicit parent still there) and no stored message names
   * the new id as its parent (a deleted id re-appended would close a cycle). Another writer on the same
   * database (a second store, a new `Session` per request) that moved the leaf meanwhile makes it read the
   * leaf again, so two writers never fork the path. Continuation rows go first and the leaf pointer after,
   * so a failure between statements (a client without transactions) leaves either nothing or a stored
   * message whose retry succeeds.
   */
  async #append(
    message: SessionMessage,
    content: string,
    slices: string[],
    parentId: string | null | undefined,
  ): Promise<void> {
    if ((await this.#ready()) === "lean") return this.#appendLean(message, content, slices, parentId);
    for (let attempt = 0; attempt < appendAttempts; attempt++) {
      if (await this.#storedAlready(message, content, parentId)) return;
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
      const chunks = slices.length - 1;
      if (chunks > 0) {
        await this.#client.batch(
          slices.slice(1).map(
            (slice, index) => sql`INSERT OR REPLACE INTO assistant_message_chunks (id, idx, content)
              VALUES (${message.id}, ${index + 1}, ${slice})`,
          ),
        );
      }
      const parentStill =
        parentId !== undefined
          ? parent === null
            ? sql`1`
            : sql`EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${parent.id} AND session_id = ${this.#sessionId})`
          : parent === null
            ? sql`NOT EXISTS (SELECT 1 FROM assistant_messages WHERE session_id = ${this.#sessionId})`
            : sql`NOT EXISTS (SELECT 1 FROM assistant_messages INDEXED BY idx_assistant_msg_parent
                WHERE parent_id = ${parent.id} AND session_id = ${this.#sessionId})`;
      const inserted = await this.#one(sql`
        INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth, content_chunks)
        SELECT ${message.id}, ${this.#sessionId}, ${parent?.id ?? null}, ${message.role}, ${slices[0] ?? ""},
          ${depth}, ${chunks > 0 ? chunks : null}
        WHERE NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${message.id})
          AND NOT EXISTS (SELECT 1 FROM assistant_messages INDEXED BY idx_assistant_msg_parent
            WHERE parent_id = ${message.id})
          AND ${parentStill}
        RETURNING id`);
      if (inserted.length > 0) {
        const indexed = this.#indexOnAppend ? indexedMessageOf(message) : null;
        const text = indexed?.text ?? "";
        const withContext = text.length > 0 && (await hasContextColumn(this.#client));
        await this.#client.batch([
          sql`INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (${this.#sessionId}, ${message.id})
            ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`,
          ...(text.length > 0
            ? [
                // With its context from its ancestors' rows; when the index is behind (the mark does not
                // move), the next search indexes the range again, context included.
                indexMessageStatement(
                  this.#sessionId,
                  message.id,
                  indexed ?? { text, speaker: "", time: null },
                  withContext,
                ),
                // Its parent's and grandparent's rows gain it as the turn after them.
                ...refreshContextStatements(this.#sessionId, message.id, parent?.id ?? null, withContext),
                sql`UPDATE assistant_fts_state SET indexed_rowid = (SELECT rowid FROM assistant_messages
                  WHERE id = ${message.id}) WHERE key = 'messages' AND indexed_rowid = (SELECT rowid - 1
                  FROM assistant_messages WHERE id = ${message.id})`,
              ]
            : []),
        ]);
        return;
      }
      const orphans = await this.#client.query<{ id: string }>`
        SELECT id FROM assistant_messages INDEXED BY idx_assistant_msg_parent WHERE parent_id = ${message.id} LIMIT 3`;
      if (orphans.length > 0) throw stillAParent(message.id, orphans);
      // The id appeared (checked at the top of the loop) or the leaf moved: read again.
    }
    throw new ContextError(
      "PROVIDER_FAILED",
      `appendMessage: the latest leaf of session "${this.#sessionId}" kept moving under other writers; message "${message.id}" was not stored`,
    );
  }

  /**
   * The append on the lean layout: one conditional INSERT, which reads the parent's row and the rows added
   * since this client last looked (`tailStill`), and writes the message's row and its primary-key entry,
   * nothing else (2 rows written on a Durable Object). The parent is the remembered tail, an explicit
   * parent read by id, or none. A cycle cannot form through `parent_seq` (a new row has a new rowid); an id
   * deleted while stored messages still named it is refused through its tombstone, as the indexed layout
   * refuses it through its parent index.
   */
  async #appendLean(
    message: SessionMessage,
    content: string,
    slices: string[],
    parentId: string | null | undefined,
  ): Promise<void> {
    for (let attempt = 0; attempt < appendAttempts; attempt++) {
      let parent: LeafRow | null;
      let guard: SqlStatement;
      if (parentId === undefined) {
        const tail =
          cachedTail(this.#client, this.#sessionId) ?? (await readTail(this.#client, this.#sessionId));
        parent = tail.leaf;
        guard = tailStill(tail, this.#sessionId);
      } else if (parentId === null) {
        parent = null;
        guard = sql`1`;
      } else {
        parent = await this.#row(parentId);
        if (parent === null) {
          if (await this.#storedAlready(message, content, parentId)) return;
          throw new ContextError(
            "NOT_FOUND",
            `appendMessage: parent "${parentId}" of message "${message.id}" is not in this session`,
          );
        }
        guard = sql`EXISTS (SELECT 1 FROM assistant_messages WHERE rowid = ${parent.rowid ?? -1} AND id = ${parent.id})`;
      }
      const depth = parent === null ? 0 : (await this.#depthOf(parent)) + 1;
      const chunks = slices.length - 1;
      if (chunks > 0) {
        await this.#client.batch(
          slices.slice(1).map(
            (slice, index) => sql`INSERT OR REPLACE INTO assistant_message_chunks (id, idx, content)
              VALUES (${message.id}, ${index + 1}, ${slice})`,
          ),
        );
      }
      const inserted = await this.#one(sql`
        INSERT INTO assistant_messages (id, session_id, parent_id, parent_seq, role, content, depth, content_chunks)
        SELECT ${message.id}, ${this.#sessionId}, ${parent?.id ?? null}, ${parent?.rowid ?? null}, ${message.role},
          ${slices[0] ?? ""}, ${depth}, ${chunks > 0 ? chunks : null}
        WHERE NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${message.id})
          AND NOT EXISTS (SELECT 1 FROM assistant_message_tombstones WHERE id = ${message.id})
          AND ${guard} AND ${leanLayoutStill}
        RETURNING rowid`);
      const rowid = inserted[0]?.rowid;
      if (rowid !== undefined) {
        rememberTail(this.#client, this.#sessionId, {
          leaf: { id: message.id, rowid: Number(rowid), depth },
          horizon: Number(rowid),
        });
        const indexed = this.#indexOnAppend ? indexedMessageOf(message) : null;
        if (indexed !== null && indexed.text.length > 0) {
          const withContext = await hasContextColumn(this.#client);
          await this.#client.batch([
            // With its context from its ancestors' rows; theirs gain it as the turn after them.
            indexMessageStatement(this.#sessionId, message.id, indexed, withContext),
            ...refreshContextStatements(this.#sessionId, message.id, parent?.id ?? null, withContext),
            sql`UPDATE assistant_fts_state SET indexed_rowid = ${Number(rowid)}
              WHERE key = 'messages' AND indexed_rowid = ${Number(rowid) - 1}`,
          ]);
        }
        return;
      }
      if ((await this.#one(sql`SELECT 1 AS lean WHERE ${leanLayoutStill}`)).length === 0) {
        // agents@0.22.0 opened the database meanwhile (its parent index is there): from now on the
        // indexed layout's rules, which find through that index the stored messages naming an id.
        forgetLayout(this.#client);
        rememberTail(this.#client, this.#sessionId, undefined);
        return this.#append(message, content, slices, parentId);
      }
      if (await this.#storedAlready(message, content, parentId)) {
        rememberTail(this.#client, this.#sessionId, undefined);
        return;
      }
      const tombstone = await this.#client.query<{ id: string }>`
        SELECT id FROM assistant_message_tombstones WHERE id = ${message.id}`;
      if (tombstone.length > 0) {
        // A scan (no parent index): only when a deleted id comes back.
        const orphans = await this.#client.query<{ id: string }>`
          SELECT id FROM assistant_messages WHERE parent_id = ${message.id} LIMIT 3`;
        if (orphans.length > 0) throw stillAParent(message.id, orphans);
        await this.#client.query`DELETE FROM assistant_message_tombstones WHERE id = ${message.id}`;
        continue;
      }
      // Another writer moved the session: read its tail again.
      rememberTail(this.#client, this.#sessionId, undefined);
    }
    throw new ContextError(
      "PROVIDER_FAILED",
      `appendMessage: the latest leaf of session "${this.#sessionId}" kept moving under other writers; message "${message.id}" was not stored`,
    );
  }

  /**
   * `true` when this very message is already stored (a retried append whose insert committed): the retry
   * succeeds, re-pointing the leaf. The same id with other content or elsewhere fails as a duplicate.
   */
  async #storedAlready(
    message: SessionMessage,
    content: string,
    parentId: string | null | undefined,
  ): Promise<boolean> {
    const existing = await this.#client.query<ContentRow & { session_id: string; parent_id: string | null }>`
      SELECT id, session_id, parent_id, content, content_chunks FROM assistant_messages WHERE id = ${message.id}`;
    const row = existing[0];
    if (row === undefined) return false;
    if (row.session_id === this.#sessionId && (parentId === undefined || parentId === row.parent_id)) {
      const chunks = Number(row.content_chunks ?? 0);
      const stored =
        chunks > 0
          ? row.content + ((await readContinuations(this.#client, [row.id])).get(row.id) ?? "")
          : row.content;
      if (stored === content) {
        // The lean layout keeps no pointer: its tail is read again.
        if ((await this.#ready()) === "indexed") {
          await this.#client.query`
            INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (${this.#sessionId}, ${message.id})
            ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`;
        }
        return true;
      }
    }
    const where = row.session_id === this.#sessionId ? "this session" : "another session";
    throw new ContextError(
      "INVALID_INPUT",
      `appendMessage: a message with id "${message.id}" already exists in ${where}; use updateMessage to change it`,
    );
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    const content = serialize(checked);
    const slices = sliceStoredMessage(content, checked.id);
    return this.#queue.run(async () => {
      await this.#ready();
      const row = await this.#rowid(checked.id);
      if (row === null) {
        throw new ContextError("NOT_FOUND", `updateMessage: no message "${checked.id}" in this session`);
      }
      const indexed = indexedMessageOf(checked);
      const text = indexed.text;
      const chunks = slices.length - 1;
      const statements: SqlStatement[] = [
        ...slices.slice(1).map(
          (slice, index) => sql`INSERT OR REPLACE INTO assistant_message_chunks (id, idx, content)
            VALUES (${checked.id}, ${index + 1}, ${slice})`,
        ),
        sql`DELETE FROM assistant_message_chunks WHERE id = ${checked.id} AND idx > ${chunks}`,
        sql`UPDATE assistant_messages SET content = ${slices[0] ?? ""}, role = ${checked.role},
          content_chunks = ${chunks > 0 ? chunks : null}
          WHERE id = ${checked.id} AND session_id = ${this.#sessionId}`,
        ...(await this.#unindexStatements(checked.id, row)),
      ];
      const withContext = await hasContextColumn(this.#client);
      if (text.length > 0) {
        statements.push(
          indexMessageStatement(this.#sessionId, checked.id, indexed, withContext, { indexedOnly: true }),
        );
      }
      // Its children, grandchildren, parent and grandparent carry its text as context.
      statements.push(
        ...refreshContextStatements(
          this.#sessionId,
          checked.id,
          await this.#parentOf(checked.id),
          withContext,
        ),
      );
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
      const layout = await this.#ready();
      rememberTail(this.#client, this.#sessionId, undefined);
      for (const id of messageIds) {
        if (typeof id !== "string") continue;
        const row = await this.#rowid(id);
        if (row === null) continue;
        const lean = layout === "lean";
        const parentId = await this.#parentOf(id);
        await this.#client.batch([
          ...(await this.#unindexStatements(id, row)),
          ...(lean
            ? [
                // No parent index: every later row of the session has its depth counted again when used
                // (descendants are inserted after their ancestors), and an id that stays a parent is
                // remembered so that it is refused on append.
                sql`UPDATE assistant_messages SET depth = NULL
                  WHERE rowid > ${row} AND session_id = ${this.#sessionId} AND depth IS NOT NULL`,
                sql`INSERT OR IGNORE INTO assistant_message_tombstones (session_id, id)
                  SELECT ${this.#sessionId}, ${id}
                  WHERE EXISTS (SELECT 1 FROM assistant_messages WHERE parent_id = ${id})`,
              ]
            : []),
          // Descendants keep their parent link (as in agents) but their depth no longer holds.
          sql`UPDATE assistant_messages SET depth = NULL WHERE ${lean ? raw("0 AND") : raw("")} id IN (
            WITH RECURSIVE below(id) AS (
              SELECT id FROM assistant_messages WHERE parent_id = ${id} AND session_id = ${this.#sessionId}
              UNION ALL
              SELECT m.id FROM assistant_messages m JOIN below b ON m.parent_id = b.id
                WHERE +m.session_id = ${this.#sessionId}
            ) SELECT id FROM below)`,
          sql`DELETE FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`,
          sql`DELETE FROM assistant_message_chunks WHERE id = ${id}`,
          sql`DELETE FROM assistant_leaves WHERE session_id = ${this.#sessionId} AND leaf_id = ${id}`,
          ...refreshContextStatements(this.#sessionId, id, parentId, await hasContextColumn(this.#client)),
          // SQLite gives the next row the largest rowid + 1: the mark must stay below any new rowid.
          lowerIndexMark,
        ]);
      }
    });
  }

  clearMessages(): Promise<void> {
    return this.#queue.run(async () => {
      await this.#ready();
      rememberTail(this.#client, this.#sessionId, undefined);
      await this.#client.batch([
        sql`DELETE FROM assistant_message_tombstones WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_message_chunks WHERE id IN (
          SELECT id FROM assistant_messages WHERE session_id = ${this.#sessionId} AND content_chunks > 0)`,
        sql`DELETE FROM assistant_messages WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_compactions WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_fts WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_leaves WHERE session_id = ${this.#sessionId}`,
        lowerIndexMark,
      ]);
    });
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
  ): Promise<StoredCompaction> {
    checkCompactionArguments(summary, fromMessageId, toMessageId);
    return this.#queue.run(async () => {
      await this.#ready();
      // A retry of an addCompaction whose insert committed (the caller saw a failure after it) returns
      // the stored overlay instead of adding a second one (only when it is still the newest).
      const newest = (await this.getCompactions()).at(-1);
      if (sameOverlay(newest, summary, fromMessageId, toMessageId)) return newest;
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
    await catchUpMessageIndex(this.#client);
    return searchMessageIndex(this.#client, query, { limit, sessionId: this.#sessionId });
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  async #one(statement: SqlStatement): Promise<Record<string, unknown>[]> {
    return ((await this.#client.batch([statement]))[0] ?? []) as Record<string, unknown>[];
  }

  #ready(): Promise<SessionLayout> {
    return schemaReady(this.#client);
  }

  async #resolveLeaf(leafId: string | null | undefined, layout: SessionLayout): Promise<LeafRow | null> {
    if (leafId === undefined || leafId === null) {
      return layout === "lean" ? (await currentTail(this.#client, this.#sessionId)).leaf : this.#latestLeaf();
    }
    return this.#row(leafId);
  }

  async #row(id: string): Promise<LeafRow | null> {
    const rows = await this.#client.query<LeafRow>`
      SELECT id, depth, rowid FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`;
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
      SELECT m.id AS id, m.parent_id AS parent_id, m.content AS content, m.content_chunks AS content_chunks,
        path.step AS step
      FROM path CROSS JOIN assistant_messages m ON m.id = path.id`;
    const ordered = orderPath(rows);
    checkWholePath(ordered, "getHistory");
    return this.#parseRows(ordered);
  }

  /** The path on the lean layout, root first (`readLeanPath`: about one row read per message). */
  async #readLeanPath(leaf: LeafRow): Promise<SessionMessage[]> {
    const start = await this.#leafWithRowid(leaf);
    if (start === null) return [];
    const { rows } = await readLeanPath(this.#client, this.#sessionId, start);
    const ordered = rows.reverse();
    checkWholePath(ordered, "getHistory");
    return this.#parseRows(ordered);
  }

  async #leafWithRowid(leaf: LeafRow): Promise<{ id: string; rowid: number } | null> {
    if (leaf.rowid !== undefined && leaf.rowid !== null) return { id: leaf.id, rowid: Number(leaf.rowid) };
    const row = await this.#row(leaf.id);
    return row?.rowid === undefined ? null : { id: row.id, rowid: Number(row.rowid) };
  }

  /** `getRecentHistory` on the lean layout: the same range reads, stopped by the byte budget. */
  async #leanRecentHistory(leaf: LeafRow, floor: number, maxBytes: number): Promise<RecentHistoryResult> {
    const start = await this.#leafWithRowid(leaf);
    if (start === null) return { messages: [], truncated: false, totalContentBytes: 0 };
    let total = 0;
    const { rows, more } = await readLeanPath(this.#client, this.#sessionId, start, (row, taken) => {
      if (taken >= maximumPathLength) return true;
      const bytes = Number(row.bytes);
      if (taken + 1 > floor && total + bytes > maxBytes) return true;
      total += bytes;
      return false;
    });
    const messages = await this.#parseRows(rows.reverse());
    const compactions = await this.getCompactions();
    return { messages: applyCompactions(messages, compactions), truncated: more, totalContentBytes: total };
  }

  /** Messages of rows in order, continuation rows joined (one read for all that have them). */
  async #parseRows(rows: readonly ContentRow[]): Promise<SessionMessage[]> {
    const continued = await readContinuations(
      this.#client,
      rows.filter((row) => Number(row.content_chunks ?? 0) > 0).map((row) => row.id),
    );
    const messages: SessionMessage[] = [];
    for (const row of rows) {
      const message = parseMessage(row.content + (continued.get(row.id) ?? ""));
      if (message !== null) messages.push(message);
    }
    return messages;
  }

  /** The parent id of a stored message (`null` for a root or an unknown id). */
  async #parentOf(id: string): Promise<string | null> {
    const rows = await this.#client.query<{ parent_id: string | null }>`
      SELECT parent_id FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`;
    return rows[0]?.parent_id ?? null;
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

function stillAParent(id: string, orphans: readonly { id: string }[]): ContextError {
  return new ContextError(
    "INVALID_INPUT",
    `appendMessage: id "${id}" is still the parent of stored messages (${orphans
      .map((row) => `"${row.id}"`)
      .join(
        ", ",
      )}; it was deleted without them); storing a new message under it could make a cycle: use another id`,
  );
}

/** After a delete: the search index's mark never above the largest rowid left. */
const lowerIndexMark = sql`UPDATE assistant_fts_state SET indexed_rowid = MIN(indexed_rowid,
  (SELECT COALESCE(MAX(rowid), 0) FROM assistant_messages)) WHERE key = 'messages'`;

/** Bytes a row's continuation rows hold (a correlated read only for rows that have them). */
function chunkBytes(alias: "m" | "assistant_messages"): SqlStatement {
  return raw(`(CASE WHEN COALESCE(${alias}.content_chunks, 0) = 0 THEN 0 ELSE (SELECT SUM(LENGTH(CAST(c.content AS BLOB)))
    FROM assistant_message_chunks c WHERE c.id = ${alias}.id) END)`);
}
