import { ContextError, describeValue } from "@contextblocks/core";
import {
  type AppendedMessage,
  applyCompactions,
  checkCalibration,
  checkCompactionArguments,
  checkMessageId,
  checkRecentHistoryBudget,
  checkSessionMessage,
  checkWholePath,
  isIdenticalRetry,
  type MessageNode,
  maximumPathLength,
  messageTokenStamp,
  orderPath,
  type PathMessagesResult,
  type PathTokenRow,
  parseStoredMessage as parseMessage,
  pathTokensWithOverlays,
  type RecentHistoryResult,
  type SearchResult,
  type SessionMessage,
  type SessionStore,
  type StoredCompaction,
  sameOverlay,
  serializeMessage as serialize,
  storedIdError,
  storedTokenStamp,
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
import { readKeyedPath } from "./keyed-path.js";
import {
  cachedKeyedTail,
  currentKeyedTail,
  keyedTailStill,
  largestSeq,
  readKeyedTail,
  rememberKeyedTail,
} from "./keyed-tail.js";
import { type LeanPathRow, readLeanPath } from "./lean-path.js";
import { cachedTail, currentTail, readTail, rememberTail, tailStill } from "./lean-tail.js";
import { catchUpMessageIndex, readContinuations } from "./message-index.js";
import { indexedMessageOf } from "./message-index-text.js";
import {
  appendedContinuationRows,
  continuationRows,
  sliceStoredMessage,
  unstoredChunksDeletion,
} from "./message-rows.js";
import {
  hasContextColumn,
  indexMessageStatement,
  keyedRowStatement,
  keyedRowUpdateStatement,
  refreshContextStatements,
  searchMessageIndex,
} from "./message-search.js";
import { SerialQueue } from "./serial-queue.js";
import {
  forgetLayout,
  leanLayoutStill,
  type NewSessionLayout,
  type SessionLayout,
  schemaReady,
} from "./session-schema.js";

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
  /**
   * The layout given to a database that has no session tables yet (a database that has them keeps its
   * own): `"keyed"` (an append writes 2 billed rows on a Durable Object, search row included) or `"lean"`
   * (no search row on append: faster where rows are not billed; agents@0.22.0 can still read and write it).
   * Default: keyed where the client bills rows (a Durable Object, or a client that does not say), lean
   * where it says it does not (better-sqlite3).
   */
  newDatabaseLayout?: NewSessionLayout | undefined;
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
  /** The stamps of the path root..this row summed (`NULL`: not known, summed along the path when needed). */
  path_tokens?: number | null | undefined;
  /** Read on the lean layout, where a path is walked by rowid; on the keyed layout, the row's `seq`. */
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
  readonly #newLayout: NewSessionLayout | undefined;

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
    const messages = layout === "indexed" ? await this.#readPath(leaf.id) : await this.#readWalkedPath(leaf);
    const compactions = await this.getCompactions();
    return applyCompactions(messages, compactions);
  }

  /**
   * The stored path root..leaf, overlays not applied, in the read `getHistory` makes (on the lean layout
   * `readLeanPath`: about one row read per message). A leaf-first budget (`newestFirst` with `maxBytes`)
   * stops the lean layout's walk one message past it, so only the newest rows are read; a root-first
   * budget is known only at the root (the walk runs leaf first), so the caller cuts.
   */
  async getPathMessages(
    leafId?: string | null,
    options?: { maxBytes?: number; newestFirst?: boolean },
  ): Promise<PathMessagesResult> {
    const layout = await this.#ready();
    const leaf = await this.#resolveLeaf(leafId, layout);
    if (leaf === null) return { messages: [], truncated: false };
    const maxBytes = options?.maxBytes;
    if (
      layout !== "indexed" &&
      options?.newestFirst === true &&
      typeof maxBytes === "number" &&
      Number.isFinite(maxBytes)
    ) {
      let total = 0;
      let budgetStopped = false;
      const walked = await this.#walk(leaf, layout, (row) => {
        if (total > maxBytes) {
          budgetStopped = true;
          return true;
        }
        total += Number(row.bytes);
        return false;
      });
      if (walked === null) return { messages: [], truncated: false };
      const { rows, more } = walked;
      const ordered = rows.reverse();
      if (!budgetStopped) checkWholePath(ordered, "getHistory");
      return { messages: await this.#parseRows(ordered), truncated: budgetStopped && more };
    }
    const messages = layout === "indexed" ? await this.#readPath(leaf.id) : await this.#readWalkedPath(leaf);
    return { messages, truncated: false };
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
    if (layout !== "indexed") return this.#walkedRecentHistory(leaf, layout, floor, maxBytes);
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
    if (layout === "keyed") {
      // The remembered tail's row, read only while it is still the tail (one statement, one row).
      const cached = cachedKeyedTail(this.#client, this.#sessionId);
      if (cached?.leaf !== null && cached?.leaf !== undefined) {
        const rows = (await this.#one(sql`
          SELECT id, content, content_chunks FROM assistant_messages
          WHERE id = ${cached.leaf.id} AND session_id = ${this.#sessionId} AND ${keyedTailStill(cached)}`)) as unknown as ContentRow[];
        if (rows.length > 0) return (await this.#parseRows(rows))[0] ?? null;
      }
      const leaf = (await readKeyedTail(this.#client, this.#sessionId)).leaf;
      return leaf === null ? null : this.getMessage(leaf.id);
    }
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
    const order = (await this.#ready()) === "keyed" ? raw("seq") : raw("rowid");
    const rows = await this.#client.run<NodeRow>(sql`
      SELECT id, parent_id, role, created_at FROM assistant_messages
      WHERE session_id = ${this.#sessionId} ORDER BY ${order} ASC LIMIT ${Number.isFinite(limit) ? Math.floor(limit) : -1}`);
    return rows.map(nodeOf);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    const layout = await this.#ready();
    // The lean layout has no parent index: a scan of the table (branches are read rarely).
    const rows = (await this.#one(sql`
      SELECT id, content, content_chunks FROM assistant_messages ${layout === "indexed" ? raw("INDEXED BY idx_assistant_msg_parent") : raw("")}
      WHERE parent_id = ${messageId} AND session_id = ${this.#sessionId}
      ORDER BY created_at ASC, ${layout === "keyed" ? raw("seq") : raw("rowid")} ASC`)) as unknown as ContentRow[];
    return this.#parseRows(rows);
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    const layout = await this.#ready();
    const leaf = await this.#resolveLeaf(leafId, layout);
    if (leaf === null) return 0;
    return (await this.#depthOf(leaf)) + 1;
  }

  async appendMessage(
    message: SessionMessage,
    parentId?: string | null,
  ): Promise<AppendedMessage | undefined> {
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
    const stamp = messageTokenStamp(checked);
    return this.#queue.run(async () => {
      try {
        return await this.#append(checked, content, slices, stamp, parentId);
      } catch (error) {
        // A refused append leaves none of its continuation rows: they hold its text and no row reads them.
        if (slices.length > 1) {
          await this.#client.run(unstoredChunksDeletion(checked.id)).catch(() => undefined);
        }
        throw error;
      }
    });
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
    stamp: number,
    parentId: string | null | undefined,
  ): Promise<AppendedMessage | undefined> {
    const layout = await this.#ready();
    if (layout === "keyed") return this.#appendKeyed(message, content, slices, stamp, parentId);
    if (layout === "lean") return this.#appendLean(message, content, slices, stamp, parentId);
    for (let attempt = 0; attempt < appendAttempts; attempt++) {
      if (await this.#storedAlready(message, content, parentId)) return undefined;
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
      const pathTokens = parent === null ? stamp : (await this.#pathTokensOf(parent)) + stamp;
      const chunks = slices.length - 1;
      if (chunks > 0) await this.#client.batch(appendedContinuationRows(message.id, slices));
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
        INSERT INTO assistant_messages (id, session_id, parent_id, role, content, depth, content_chunks,
          tokens, path_tokens)
        SELECT ${message.id}, ${this.#sessionId}, ${parent?.id ?? null}, ${message.role}, ${slices[0] ?? ""},
          ${depth}, ${chunks > 0 ? chunks : null}, ${stamp}, ${pathTokens}
        WHERE NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${message.id})
          AND NOT EXISTS (SELECT 1 FROM assistant_messages INDEXED BY idx_assistant_msg_parent
            WHERE parent_id = ${message.id})
          AND ${parentStill}
        RETURNING id, created_at`);
      if (inserted.length > 0) {
        const appended: AppendedMessage = {
          parentId: parent?.id ?? null,
          createdAt: (inserted[0]?.created_at as string | null | undefined) ?? null,
        };
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
        return appended;
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
    stamp: number,
    parentId: string | null | undefined,
  ): Promise<AppendedMessage | undefined> {
    for (let attempt = 0; attempt < appendAttempts; attempt++) {
      let parent: LeafRow | null;
      // Besides the parent's row (read as the source of the insert): what must still hold.
      let guard: SqlStatement;
      if (parentId === undefined) {
        const tail =
          cachedTail(this.#client, this.#sessionId) ?? (await readTail(this.#client, this.#sessionId));
        parent =
          tail.leaf === null
            ? null
            : {
                id: tail.leaf.id,
                rowid: tail.leaf.rowid,
                depth: tail.leaf.depth,
                path_tokens: tail.leaf.pathTokens,
              };
        guard = tailStill({ ...tail, leaf: null }, this.#sessionId);
      } else if (parentId === null) {
        parent = null;
        guard = sql`1`;
      } else {
        const named = await this.#namedParent(message, content, parentId);
        if (named === undefined) return undefined;
        parent = named;
        guard = sql`1`;
      }
      const depth = parent === null ? 0 : (await this.#depthOf(parent)) + 1;
      // The parent's path total as stored when the insert reads its row (another writer's update may have
      // cleared it); summed along the path here only when this client knows it is missing.
      const knownTokens =
        parent === null || parent.path_tokens !== null ? null : await this.#pathTokensOf(parent);
      const chunks = slices.length - 1;
      if (chunks > 0) await this.#client.batch(appendedContinuationRows(message.id, slices));
      // The parent's row is the insert's source (no row: it was deleted, nothing is inserted), so the
      // check that it still exists and its path total cost one row read between them. The outcome is read
      // with `changes()` and `last_insert_rowid()` in the same group (no row read; `RETURNING` reads one),
      // and the row's time is given, so the change feed needs nothing read back.
      const createdAt = sqliteTimestamp();
      const parentTokens = parent === null ? 0 : (storedTokenStamp(parent.path_tokens) ?? knownTokens);
      const insert = sql`
        INSERT INTO assistant_messages (id, session_id, parent_id, parent_seq, role, content, depth, content_chunks,
          tokens, path_tokens, created_at)
        SELECT ${message.id}, ${this.#sessionId}, ${parent?.id ?? null}, ${parent?.rowid ?? null}, ${message.role},
          ${slices[0] ?? ""}, ${depth}, ${chunks > 0 ? chunks : null}, ${stamp},
          ${parent === null ? sql`${stamp}` : sql`COALESCE(p.path_tokens, ${knownTokens}) + ${stamp}`}, ${createdAt}
        FROM ${parent === null ? sql`(SELECT 1) AS p` : sql`assistant_messages AS p`}
        WHERE ${parent === null ? sql`1` : sql`p.rowid = ${parent.rowid ?? -1} AND p.id = ${parent.id}`}
          AND NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${message.id})
          AND NOT EXISTS (SELECT 1 FROM assistant_message_tombstones WHERE id = ${message.id})
          AND ${guard} AND ${leanLayoutStill}`;
      // On a client whose batch is not one transaction (a tagged-template `sql` without `ctx.storage`)
      // another statement could run between the two: the insert reports its own row instead.
      const result = (
        this.#client.atomic
          ? (
              await this.#client.batch([
                insert,
                sql`SELECT changes() AS stored, last_insert_rowid() AS rowid`,
              ])
            )[1]
          : await this.#client.run(sql`${insert} RETURNING 1 AS stored, rowid`)
      )?.[0] as { stored?: unknown; rowid?: unknown } | undefined;
      const rowid = Number(result?.stored ?? 0) > 0 ? Number(result?.rowid) : undefined;
      if (rowid !== undefined) {
        // What the insert stored unless another writer cleared the parent's total meanwhile (then the
        // row's total is NULL and a read sums the path; this cache only feeds the next append's fallback).
        const pathTokens = parentTokens === null ? null : parentTokens + stamp;
        rememberTail(this.#client, this.#sessionId, {
          leaf: { id: message.id, rowid, depth, pathTokens },
          horizon: rowid,
        });
        const appended: AppendedMessage = { parentId: parent?.id ?? null, createdAt };
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
        return appended;
      }
      if ((await this.#one(sql`SELECT 1 AS lean WHERE ${leanLayoutStill}`)).length === 0) {
        // agents@0.22.0 opened the database meanwhile (its parent index is there): from now on the
        // indexed layout's rules, which find through that index the stored messages naming an id.
        forgetLayout(this.#client);
        rememberTail(this.#client, this.#sessionId, undefined);
        return this.#append(message, content, slices, stamp, parentId);
      }
      if (await this.#storedAlready(message, content, parentId)) {
        rememberTail(this.#client, this.#sessionId, undefined);
        return undefined;
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
   * The append on the keyed layout: the message's row and its search row, in one transaction (2 rows
   * written on a Durable Object). The row takes `seq` = the largest search rowid + 1 and its search row
   * that rowid (keyed-tail.ts). Appended to the remembered tail, the insert also checks that the largest
   * search rowid is still the tail's horizon (0 rows read), so a second writer makes it read the tail again
   * instead of forking; an explicit parent is read by id. On a client whose batch is not one transaction, a
   * failure between the two statements leaves a message without its search row: its retry finds it stored
   * and writes the search row (`#storedAlready`).
   */
  async #appendKeyed(
    message: SessionMessage,
    content: string,
    slices: string[],
    stamp: number,
    parentId: string | null | undefined,
  ): Promise<AppendedMessage | undefined> {
    const indexed = indexedMessageOf(message);
    for (let attempt = 0; attempt < appendAttempts; attempt++) {
      let parent: LeafRow | null;
      let guard: SqlStatement;
      if (parentId === undefined) {
        const tail =
          cachedKeyedTail(this.#client, this.#sessionId) ??
          (await readKeyedTail(this.#client, this.#sessionId));
        parent =
          tail.leaf === null
            ? null
            : { id: tail.leaf.id, depth: tail.leaf.depth, path_tokens: tail.leaf.pathTokens };
        guard = keyedTailStill(tail);
      } else if (parentId === null) {
        parent = null;
        guard = sql`1`;
      } else {
        const named = await this.#namedParent(message, content, parentId);
        if (named === undefined) return undefined;
        parent = named;
        guard = sql`1`;
      }
      const depth = parent === null ? 0 : (await this.#depthOf(parent)) + 1;
      const knownTokens =
        parent === null || parent.path_tokens !== null ? null : await this.#pathTokensOf(parent);
      const chunks = slices.length - 1;
      if (chunks > 0) await this.#client.batch(appendedContinuationRows(message.id, slices));
      const createdAt = sqliteTimestamp();
      const parentTokens = parent === null ? 0 : (storedTokenStamp(parent.path_tokens) ?? knownTokens);
      // The parent's row is the insert's source (deleted meanwhile: nothing is inserted).
      const insert = sql`
        INSERT INTO assistant_messages (id, session_id, parent_id, seq, role, content, depth, content_chunks,
          tokens, path_tokens, created_at)
        SELECT ${message.id}, ${this.#sessionId}, ${parent?.id ?? null}, ${largestSeq} + 1, ${message.role},
          ${slices[0] ?? ""}, ${depth}, ${chunks > 0 ? chunks : null}, ${stamp},
          ${parent === null ? sql`${stamp}` : sql`COALESCE(p.path_tokens, ${knownTokens}) + ${stamp}`}, ${createdAt}
        FROM ${parent === null ? sql`(SELECT 1) AS p` : sql`assistant_messages AS p`}
        WHERE ${parent === null ? sql`1` : sql`p.id = ${parent.id} AND p.session_id = ${this.#sessionId}`}
          AND NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${message.id})
          AND NOT EXISTS (SELECT 1 FROM assistant_message_tombstones WHERE id = ${message.id})
          AND ${guard}`;
      const searchRow = keyedRowStatement(this.#sessionId, message.id, indexed);
      let seq: number | undefined;
      if (this.#client.atomic) {
        // Both rows or neither; the outcome from `changes()` and the largest rowid (no row read).
        const result = (
          await this.#client.batch([insert, searchRow, sql`SELECT changes() AS stored, ${largestSeq} AS seq`])
        )[2]?.[0] as { stored?: unknown; seq?: unknown } | undefined;
        if (Number(result?.stored ?? 0) > 0) seq = Number(result?.seq);
      } else {
        // Another writer may run between the two statements and take the same `seq` (its guard read the
        // same largest rowid): the one whose search row is written keeps it, the other takes its row back
        // and reads the tail again, so the two never fork.
        const stored = (await this.#client.run(sql`${insert} RETURNING seq`))[0] as
          | { seq?: unknown }
          | undefined;
        if (stored !== undefined) {
          await this.#client.run(searchRow);
          const ordered = await this.#client.run(sql`
            SELECT 1 FROM assistant_fts WHERE rowid = ${Number(stored.seq)} AND id = ${message.id}`);
          if (ordered.length > 0) seq = Number(stored.seq);
          else {
            await this.#client.run(sql`
              DELETE FROM assistant_messages WHERE id = ${message.id} AND seq = ${Number(stored.seq)}`);
            rememberKeyedTail(this.#client, this.#sessionId, undefined);
            continue;
          }
        }
      }
      if (seq !== undefined) {
        const pathTokens = parentTokens === null ? null : parentTokens + stamp;
        rememberKeyedTail(this.#client, this.#sessionId, {
          leaf: { id: message.id, seq, depth, pathTokens },
          horizon: seq,
        });
        return { parentId: parent?.id ?? null, createdAt };
      }
      if (await this.#storedAlready(message, content, parentId)) {
        rememberKeyedTail(this.#client, this.#sessionId, undefined);
        return undefined;
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
      // Another writer appended (to any session) or removed the newest message: read the tail again.
      rememberKeyedTail(this.#client, this.#sessionId, undefined);
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
    if ((await this.#ready()) === "keyed" && (await this.#dropUnordered(message.id))) return false;
    const existing = await this.#client.query<ContentRow & { session_id: string; parent_id: string | null }>`
      SELECT id, session_id, parent_id, content, content_chunks FROM assistant_messages WHERE id = ${message.id}`;
    const row = existing[0];
    if (row === undefined) return false;
    const attempt = { sessionId: this.#sessionId, parentId, content };
    const holder = { sessionId: row.session_id, parentId: row.parent_id, content: row.content };
    // Continuation rows are read only when all but the content matches (a retry of a large message).
    if (Number(row.content_chunks ?? 0) > 0 && isIdenticalRetry({ ...holder, content }, attempt)) {
      holder.content += (await readContinuations(this.#client, [row.id])).get(row.id) ?? "";
    }
    if (!isIdenticalRetry(holder, attempt)) throw storedIdError("appendMessage", message.id, holder, attempt);
    // The lean and keyed layouts keep no pointer: their tail is read again.
    if ((await this.#ready()) === "indexed") {
      await this.#client.query`
        INSERT INTO assistant_leaves (session_id, leaf_id) VALUES (${this.#sessionId}, ${message.id})
        ON CONFLICT(session_id) DO UPDATE SET leaf_id = excluded.leaf_id`;
    }
    return true;
  }

  /**
   * On the keyed layout, a message row without its search row was never appended (its append failed
   * between the two statements on a client without transactions, or lost its `seq` to another writer): it
   * is removed, so the retry appends it under the tail as it is now. `true` when a row was removed.
   */
  async #dropUnordered(id: string): Promise<boolean> {
    const removed = await this.#client.run(sql`
      DELETE FROM assistant_messages WHERE id = ${id} AND NOT EXISTS (SELECT 1 FROM assistant_fts f
        WHERE f.rowid = assistant_messages.seq AND f.id = assistant_messages.id) RETURNING id`);
    if (removed.length === 0) return false;
    // Its continuation rows too: the retry writes its own (a shorter message would leave some behind).
    await this.#client.query`DELETE FROM assistant_message_chunks WHERE id = ${id}`;
    return true;
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    const content = serialize(checked);
    const slices = sliceStoredMessage(content, checked.id);
    const stamp = messageTokenStamp(checked);
    return this.#queue.run(async () => {
      const layout = await this.#ready();
      const keyed = layout === "keyed";
      const stored = await this.#client.run<{ rowid: number; tokens: number | null }>(sql`
        SELECT ${keyed ? raw("seq") : raw("rowid")} AS rowid, tokens FROM assistant_messages
        WHERE id = ${checked.id} AND session_id = ${this.#sessionId}`);
      const row = stored[0] === undefined ? null : Number(stored[0].rowid);
      if (row === null) {
        throw new ContextError("NOT_FOUND", `updateMessage: no message "${checked.id}" in this session`);
      }
      // A changed token stamp changes the path totals of the rows below it: cleared, summed again when
      // read (the remembered tail's total too). Updating the newest message (a streamed one) clears none.
      const restamped = storedTokenStamp(stored[0]?.tokens) !== stamp;
      if (restamped) {
        rememberTail(this.#client, this.#sessionId, undefined);
        rememberKeyedTail(this.#client, this.#sessionId, undefined);
      }
      const indexed = indexedMessageOf(checked);
      const text = indexed.text;
      const chunks = slices.length - 1;
      const statements: SqlStatement[] = [
        ...continuationRows(checked.id, slices),
        sql`DELETE FROM assistant_message_chunks WHERE id = ${checked.id} AND idx > ${chunks}`,
        sql`UPDATE assistant_messages SET content = ${slices[0] ?? ""}, role = ${checked.role},
          content_chunks = ${chunks > 0 ? chunks : null}, tokens = ${stamp},
          path_tokens = CASE WHEN tokens IS NULL OR path_tokens IS NULL THEN NULL
            ELSE path_tokens - tokens + ${stamp} END
          WHERE id = ${checked.id} AND session_id = ${this.#sessionId}`,
        ...(restamped && !(keyed && (await this.#newest(row)))
          ? clearPathTokensBelow(layout, this.#sessionId, checked.id, row)
          : []),
        ...(keyed
          ? [keyedRowUpdateStatement(row, checked.id, indexed, checked.role)]
          : await this.#unindexStatements(checked.id, row)),
      ];
      const withContext = await hasContextColumn(this.#client);
      if (text.length > 0 && !keyed) {
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
          keyed ? "seq" : "rowid",
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
      rememberKeyedTail(this.#client, this.#sessionId, undefined);
      for (const id of messageIds) {
        if (typeof id !== "string") continue;
        const row = await this.#rowid(id);
        if (row === null) continue;
        const keyed = layout === "keyed";
        const lean = layout === "lean" || keyed;
        const order = keyed ? raw("seq") : raw("rowid");
        const parentId = await this.#parentOf(id);
        await this.#client.batch([
          ...(keyed
            ? [sql`DELETE FROM assistant_fts WHERE rowid = ${row} AND id = ${id}`]
            : await this.#unindexStatements(id, row)),
          ...(lean
            ? [
                // No parent index: every later row of the session has its depth counted again when used
                // (descendants are inserted after their ancestors), and an id that stays a parent is
                // remembered so that it is refused on append.
                sql`UPDATE assistant_messages SET depth = NULL, path_tokens = NULL
                  WHERE ${order} > ${row} AND session_id = ${this.#sessionId}
                    AND (depth IS NOT NULL OR path_tokens IS NOT NULL)`,
                sql`INSERT OR IGNORE INTO assistant_message_tombstones (session_id, id)
                  SELECT ${this.#sessionId}, ${id}
                  WHERE EXISTS (SELECT 1 FROM assistant_messages WHERE parent_id = ${id})`,
              ]
            : []),
          // Descendants keep their parent link (as in agents) but their depth no longer holds.
          sql`UPDATE assistant_messages SET depth = NULL, path_tokens = NULL WHERE ${lean ? raw("0 AND") : raw("")} id IN (
            WITH RECURSIVE below(id) AS (
              SELECT id FROM assistant_messages WHERE parent_id = ${id} AND session_id = ${this.#sessionId}
              UNION ALL
              SELECT m.id FROM assistant_messages m JOIN below b ON m.parent_id = b.id
                WHERE +m.session_id = ${this.#sessionId}
            ) SELECT id FROM below)`,
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

  clearMessages(): Promise<void> {
    return this.#queue.run(async () => {
      const layout = await this.#ready();
      rememberTail(this.#client, this.#sessionId, undefined);
      rememberKeyedTail(this.#client, this.#sessionId, undefined);
      await this.#client.batch([
        sql`DELETE FROM assistant_message_tombstones WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_message_chunks WHERE id IN (
          SELECT id FROM assistant_messages WHERE session_id = ${this.#sessionId} AND content_chunks > 0)`,
        sql`DELETE FROM assistant_messages WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_compactions WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_fts WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_leaves WHERE session_id = ${this.#sessionId}`,
        sql`DELETE FROM assistant_token_calibration WHERE session_id = ${this.#sessionId}`,
        ...(layout === "keyed" ? [] : [lowerIndexMark]),
      ]);
    });
  }

  /**
   * The path's estimated tokens as `getHistory` returns it, from the stamps on the rows: the leaf's
   * `path_tokens` (one row; on the lean layout the remembered tail's row, read with the check that it is
   * still the tail) when the session has no overlay, else the stamps along the path (content-free where
   * stamped) with the overlays applied as a history read applies them.
   */
  async getPathTokens(leafId?: string | null): Promise<number> {
    const layout = await this.#ready();
    let leaf: LeafRow | null;
    if ((leafId === undefined || leafId === null) && layout === "keyed") {
      const cached = cachedKeyedTail(this.#client, this.#sessionId);
      const rows =
        cached?.leaf === null || cached?.leaf === undefined
          ? []
          : ((await this.#one(sql`
          SELECT id, depth, seq AS rowid, path_tokens FROM assistant_messages
          WHERE id = ${cached.leaf.id} AND session_id = ${this.#sessionId} AND ${keyedTailStill(cached)}`)) as unknown as LeafRow[]);
      leaf = rows[0] ?? keyedLeafRow((await readKeyedTail(this.#client, this.#sessionId)).leaf);
    } else if ((leafId === undefined || leafId === null) && layout === "lean") {
      const cached = cachedTail(this.#client, this.#sessionId);
      const rows =
        cached?.leaf === null || cached?.leaf === undefined
          ? []
          : ((await this.#one(sql`
          SELECT id, depth, rowid, path_tokens FROM assistant_messages
          WHERE rowid = ${cached.leaf.rowid} AND id = ${cached.leaf.id} AND ${tailStill({ ...cached, leaf: null }, this.#sessionId)}`)) as unknown as LeafRow[]);
      leaf = rows[0] ?? (await readTail(this.#client, this.#sessionId)).leaf;
      if (leaf !== null && rows[0] === undefined) {
        const tailLeaf = leaf as unknown as { pathTokens: number | null };
        leaf = { ...leaf, path_tokens: tailLeaf.pathTokens };
      }
    } else {
      leaf = await this.#resolveLeaf(leafId, layout);
    }
    if (leaf === null) return 0;
    const compactions = await this.getCompactions();
    const stamped = storedTokenStamp(leaf.path_tokens);
    if (compactions.length === 0 && stamped !== null) return stamped;
    return pathTokensWithOverlays(await this.#pathTokenRows(leaf, layout), compactions);
  }

  async getTokenCalibration(): Promise<number | null> {
    await this.#ready();
    const rows = await this.#client.query<{ calibration: number }>`
      SELECT calibration FROM assistant_token_calibration WHERE session_id = ${this.#sessionId}`;
    const value = rows[0] === undefined ? null : Number(rows[0].calibration);
    return value !== null && Number.isFinite(value) && value > 0 ? value : null;
  }

  async setTokenCalibration(calibration: number): Promise<void> {
    const checked = checkCalibration(calibration);
    await this.#ready();
    await this.#client.query`
      INSERT INTO assistant_token_calibration (session_id, calibration) VALUES (${this.#sessionId}, ${checked})
      ON CONFLICT(session_id) DO UPDATE SET calibration = excluded.calibration`;
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
      // The time is given (as `CURRENT_TIMESTAMP` writes it), so nothing is read back (`RETURNING` reads a row).
      const createdAt = sqliteTimestamp();
      await this.#client.query`
        INSERT INTO assistant_compactions (id, session_id, summary, from_message_id, to_message_id, created_at)
        VALUES (${id}, ${this.#sessionId}, ${summary}, ${fromMessageId}, ${toMessageId}, ${createdAt})`;
      return { id, summary, fromMessageId, toMessageId, createdAt };
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
    // The keyed layout writes each search row on append: nothing to catch up.
    if ((await this.#ready()) !== "keyed") await catchUpMessageIndex(this.#client);
    return searchMessageIndex(this.#client, query, { limit, sessionId: this.#sessionId });
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  /** One statement on its own (atomic by itself: no transaction around it, as a batch would add). */
  async #one(statement: SqlStatement): Promise<Record<string, unknown>[]> {
    return this.#client.run<Record<string, unknown>>(statement);
  }

  #ready(): Promise<SessionLayout> {
    return schemaReady(this.#client, this.#newLayout);
  }

  async #resolveLeaf(leafId: string | null | undefined, layout: SessionLayout): Promise<LeafRow | null> {
    if (leafId === undefined || leafId === null) {
      if (layout === "keyed") {
        return keyedLeafRow((await currentKeyedTail(this.#client, this.#sessionId)).leaf);
      }
      return layout === "lean" ? (await currentTail(this.#client, this.#sessionId)).leaf : this.#latestLeaf();
    }
    return this.#row(leafId);
  }

  /**
   * The row of the parent an append names; `undefined` when it is gone but the message is stored under it
   * already (a retry of an append that landed), else `NOT_FOUND`.
   */
  async #namedParent(
    message: SessionMessage,
    content: string,
    parentId: string,
  ): Promise<LeafRow | undefined> {
    const parent = await this.#row(parentId);
    if (parent !== null) return parent;
    if (await this.#storedAlready(message, content, parentId)) return undefined;
    throw new ContextError(
      "NOT_FOUND",
      `appendMessage: parent "${parentId}" of message "${message.id}" is not in this session`,
    );
  }

  /** The column that orders messages: `rowid`, or `seq` on the keyed layout (which has no rowid). */
  async #order(): Promise<SqlStatement> {
    return (await this.#ready()) === "keyed" ? raw("seq") : raw("rowid");
  }

  async #row(id: string): Promise<LeafRow | null> {
    const rows = await this.#client.run<LeafRow>(sql`
      SELECT id, depth, ${await this.#order()} AS rowid, path_tokens FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`);
    return rows[0] ?? null;
  }

  async #rowid(id: string): Promise<number | null> {
    const rows = await this.#client.run<{ rowid: number }>(sql`
      SELECT ${await this.#order()} AS rowid FROM assistant_messages WHERE id = ${id} AND session_id = ${this.#sessionId}`);
    return rows[0]?.rowid ?? null;
  }

  /** True when `seq` is the largest given (the newest message of the table: no row lies after it). */
  async #newest(seq: number): Promise<boolean> {
    const rows = await this.#client.run<{ top: number }>(sql`SELECT ${largestSeq} AS top`);
    return Number(rows[0]?.top) === seq;
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
      SELECT m.id AS id, m.depth AS depth, m.path_tokens AS path_tokens FROM assistant_leaves l
      JOIN assistant_messages m ON m.id = l.leaf_id AND m.session_id = l.session_id
      WHERE l.session_id = ${this.#sessionId}
        AND NOT EXISTS (SELECT 1 FROM assistant_messages c INDEXED BY idx_assistant_msg_parent
          WHERE c.parent_id = m.id AND c.session_id = m.session_id)`;
    if (pointed[0] !== undefined) return pointed[0];
    const found = await this.#client.query<LeafRow>`
      SELECT m.id AS id, m.depth AS depth, m.path_tokens AS path_tokens FROM assistant_messages m
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

  /** The path total of a row: stored, or summed along its path (rows another writer made, or cleared). */
  async #pathTokensOf(row: LeafRow): Promise<number> {
    const stored = storedTokenStamp(row.path_tokens);
    if (stored !== null) return stored;
    const layout = await this.#ready();
    let total = 0;
    for (const step of await this.#pathTokenRows(row, layout)) total += step.tokens;
    return total;
  }

  /**
   * The path root..leaf as token stamps: content is read only for rows without a stamp (another writer's),
   * which are estimated from it.
   */
  async #pathTokenRows(leaf: LeafRow, layout: SessionLayout): Promise<PathTokenRow[]> {
    let rows: (ContentRow & { role: string; tokens: number | null })[];
    if (layout !== "indexed") {
      rows = ((await this.#walk(leaf, layout))?.rows ?? []).reverse();
    } else {
      rows = orderPath(
        await this.#client.query<ContentRow & { role: string; tokens: number | null; step: number }>`
        WITH RECURSIVE path(id, parent_id, step) AS (
          SELECT id, parent_id, 0 FROM assistant_messages WHERE id = ${leaf.id} AND session_id = ${this.#sessionId}
          UNION ALL
          SELECT m.id, m.parent_id, p.step + 1 FROM assistant_messages m JOIN path p ON m.id = p.parent_id
            WHERE +m.session_id = ${this.#sessionId} AND p.step < ${maximumPathLength}
        )
        SELECT m.id AS id, m.role AS role, m.tokens AS tokens, path.step AS step,
          CASE WHEN m.tokens IS NULL THEN m.content ELSE '' END AS content,
          CASE WHEN m.tokens IS NULL THEN m.content_chunks END AS content_chunks
        FROM path CROSS JOIN assistant_messages m ON m.id = path.id`,
      );
    }
    const unstamped = rows.filter((row) => storedTokenStamp(row.tokens) === null);
    const estimated = new Map(
      (await this.#parseRows(unstamped)).map((message) => [message.id, messageTokenStamp(message)]),
    );
    return rows.map((row) => ({
      id: row.id,
      role: row.role,
      tokens: storedTokenStamp(row.tokens) ?? estimated.get(row.id) ?? 0,
    }));
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

  /**
   * The path leaf first on the lean layout (`readLeanPath`) or the keyed one (`readKeyedPath`): about one row
   * read per message. `null` when the leaf is gone.
   */
  async #walk(
    leaf: LeafRow,
    layout: SessionLayout,
    until?: (row: LeanPathRow, taken: number) => boolean,
  ): Promise<{ rows: LeanPathRow[]; more: boolean } | null> {
    if (layout === "keyed") return readKeyedPath(this.#client, this.#sessionId, leaf.id, until);
    const start = await this.#leafWithRowid(leaf);
    if (start === null) return null;
    return readLeanPath(this.#client, this.#sessionId, start, until);
  }

  /** The path on the lean or keyed layout, root first (`#walk`). */
  async #readWalkedPath(leaf: LeafRow): Promise<SessionMessage[]> {
    const walked = await this.#walk(leaf, await this.#ready());
    if (walked === null) return [];
    const ordered = walked.rows.reverse();
    checkWholePath(ordered, "getHistory");
    return this.#parseRows(ordered);
  }

  async #leafWithRowid(leaf: LeafRow): Promise<{ id: string; rowid: number } | null> {
    if (leaf.rowid !== undefined && leaf.rowid !== null) return { id: leaf.id, rowid: Number(leaf.rowid) };
    const row = await this.#row(leaf.id);
    return row?.rowid === undefined ? null : { id: row.id, rowid: Number(row.rowid) };
  }

  /** `getRecentHistory` on the lean and keyed layouts: the path's walk, stopped by the byte budget. */
  async #walkedRecentHistory(
    leaf: LeafRow,
    layout: SessionLayout,
    floor: number,
    maxBytes: number,
  ): Promise<RecentHistoryResult> {
    let total = 0;
    const walked = await this.#walk(leaf, layout, (row, taken) => {
      if (taken >= maximumPathLength) return true;
      const bytes = Number(row.bytes);
      if (taken + 1 > floor && total + bytes > maxBytes) return true;
      total += bytes;
      return false;
    });
    if (walked === null) return { messages: [], truncated: false, totalContentBytes: 0 };
    const { rows, more } = walked;
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

/** The keyed tail's leaf as the store's leaf row. */
function keyedLeafRow(
  leaf: { id: string; seq: number; depth: number | null; pathTokens: number | null } | null,
): LeafRow | null {
  return leaf === null
    ? null
    : { id: leaf.id, rowid: leaf.seq, depth: leaf.depth, path_tokens: leaf.pathTokens };
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

/** Now as SQLite's `CURRENT_TIMESTAMP` writes it (UTC, `YYYY-MM-DD HH:MM:SS`), for rows whose time is given. */
function sqliteTimestamp(): string {
  return new Date().toISOString().slice(0, 19).replace("T", " ");
}

/**
 * After a message's token stamp changed: the path totals of the rows below it are cleared (summed again
 * when read). The lean layout has no parent index: the later rows of the session (descendants are
 * inserted after their ancestors); the indexed one walks the children.
 */
function clearPathTokensBelow(
  layout: SessionLayout,
  sessionId: string,
  id: string,
  rowid: number,
): SqlStatement[] {
  if (layout !== "indexed") {
    return [
      sql`UPDATE assistant_messages SET path_tokens = NULL
        WHERE ${layout === "keyed" ? raw("seq") : raw("rowid")} > ${rowid} AND session_id = ${sessionId}
          AND path_tokens IS NOT NULL`,
    ];
  }
  return [
    sql`UPDATE assistant_messages SET path_tokens = NULL WHERE id IN (
      WITH RECURSIVE below(id) AS (
        SELECT id FROM assistant_messages WHERE parent_id = ${id} AND session_id = ${sessionId}
        UNION ALL
        SELECT m.id FROM assistant_messages m JOIN below b ON m.parent_id = b.id
          WHERE +m.session_id = ${sessionId}
      ) SELECT id FROM below) AND path_tokens IS NOT NULL`,
  ];
}

/** After a delete: the search index's mark never above the largest rowid left. */
const lowerIndexMark = sql`UPDATE assistant_fts_state SET indexed_rowid = MIN(indexed_rowid,
  (SELECT COALESCE(MAX(rowid), 0) FROM assistant_messages)) WHERE key = 'messages'`;

/** Bytes a row's continuation rows hold (a correlated read only for rows that have them). */
function chunkBytes(alias: "m" | "assistant_messages"): SqlStatement {
  return raw(`(CASE WHEN COALESCE(${alias}.content_chunks, 0) = 0 THEN 0 ELSE (SELECT SUM(LENGTH(CAST(c.content AS BLOB)))
    FROM assistant_message_chunks c WHERE c.id = ${alias}.id) END)`);
}
