import { ContextError, describeValue } from "@contextblocks/core";
import { checkMessageId, checkSessionMessage, type SessionMessage, textOfMessage } from "../message.js";
import { messageTokenStamp, pathTokensWithOverlays } from "../message-tokens.js";
import { applyCompactions, sameOverlay } from "../overlays.js";
import type {
  AppendedMessage,
  MessageNode,
  RecentHistoryResult,
  SearchResult,
  SessionStore,
  StoredCompaction,
} from "../session-store.js";
import { checkCalibration, checkCompactionArguments, checkRecentHistoryBudget } from "../store-arguments.js";
import { isIdenticalRetry, storedIdError } from "../stored-id.js";
import {
  checkWholePath,
  maximumPathLength,
  parseStoredMessages as parseAll,
  parseStoredMessage,
  serializeMessage,
} from "../stored-message.js";

interface StoredRow {
  id: string;
  sessionId: string;
  parentId: string | null;
  role: string;
  /** The message as stored text (the codec every backend uses), so reads are copies. */
  content: string;
  createdAt: string;
  order: number;
  /** The message's token stamp (`messageTokenStamp`), set on append and update. */
  tokens: number;
}

/** Most hits a search returns, as the SQL stores cap it. */
const maximumSearchLimit = 1_000;

/**
 * The backing store of `InMemorySessionStore`: every session's messages and overlays. Share one between
 * stores to model one database (other sessions, a restart); `inMemoryBackend()` holds one.
 */
export class InMemorySessions {
  /** Messages by id: ids are unique across sessions, as in the SQL tables. */
  readonly messages = new Map<string, StoredRow>();
  readonly compactions = new Map<string, StoredCompaction[]>();
  /** Each session's token calibration (`Session.reportUsage`). */
  readonly calibrations = new Map<string, number>();
  #order = 0;

  /** @internal The next insertion number (the order of `getTree` and the latest leaf). */
  nextOrder(): number {
    return this.#order++;
  }

  /** Search over every session's messages (or one session's), by the words of their text. */
  search(query: string, limit: number, sessionId?: string): SearchResult[] {
    if (typeof query !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `search: the query must be a string, got ${describeValue(query)}`,
      );
    }
    const whole = Math.floor(Number(limit));
    if (!Number.isFinite(whole) || whole < 1 || whole > maximumSearchLimit) {
      throw new ContextError(
        "INVALID_INPUT",
        `search: limit must be a whole number from 1 to ${maximumSearchLimit}, got ${String(limit)}`,
      );
    }
    const words = new Set(wordsOf(query));
    if (words.size === 0) return [];
    const hits: { result: SearchResult; score: number; order: number }[] = [];
    for (const row of this.messages.values()) {
      if (sessionId !== undefined && row.sessionId !== sessionId) continue;
      const message = parseStoredMessage(row.content);
      if (message === null) continue;
      const content = textOfMessage(message);
      const have = new Set(wordsOf(content));
      let score = 0;
      for (const word of words) if (have.has(word)) score++;
      if (score === 0) continue;
      const result: SearchResult = { id: row.id, role: row.role, content, createdAt: row.createdAt };
      if (sessionId === undefined) result.sessionId = row.sessionId;
      hits.push({ result, score, order: row.order });
    }
    hits.sort((left, right) => right.score - left.score || left.order - right.order);
    return hits.slice(0, whole).map((hit) => hit.result);
  }

  /** Removes every message and overlay of a session. */
  clear(sessionId: string): void {
    for (const [id, row] of this.messages) if (row.sessionId === sessionId) this.messages.delete(id);
    this.compactions.delete(sessionId);
    this.calibrations.delete(sessionId);
  }
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A `SessionStore` in memory (on an `InMemorySessions`, shared or its own), for tests and quick starts. It
 * keeps the contract as the SQL stores do: messages stored as JSON text (reads are copies), refusals with
 * `ContextError`, overlays applied on read, search by words. Every operation runs without a pause, so
 * concurrent appends chain.
 */
export class InMemorySessionStore implements SessionStore {
  readonly sessionId: string;
  readonly sessions: InMemorySessions;

  constructor(options: { sessionId?: string; sessions?: InMemorySessions } = {}) {
    if (typeof options !== "object" || options === null) {
      throw new ContextError(
        "INVALID_CONFIG",
        `InMemorySessionStore: expected { sessionId?, sessions? }, got ${describeValue(options)}`,
      );
    }
    if (options.sessionId !== undefined && typeof options.sessionId !== "string") {
      throw new ContextError(
        "INVALID_CONFIG",
        `InMemorySessionStore: the session id must be a string, got ${describeValue(options.sessionId)}`,
      );
    }
    this.sessionId = options.sessionId ?? "";
    this.sessions = options.sessions ?? new InMemorySessions();
  }

  async getMessage(id: string): Promise<SessionMessage | null> {
    const row = this.#row(id);
    return row === null ? null : parseStoredMessage(row.content);
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    return applyCompactions(this.#path(leafId), this.#compactions());
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages = 1,
  ): Promise<RecentHistoryResult> {
    checkRecentHistoryBudget(maxBytes);
    const rows = this.#pathRows(leafId);
    const floor = Math.max(1, Math.floor(minMessages));
    const window: StoredRow[] = [];
    let total = 0;
    for (let index = rows.length - 1; index >= 0; index--) {
      const row = rows[index] as StoredRow;
      const bytes = new TextEncoder().encode(row.content).length;
      if (window.length >= floor && total + bytes > maxBytes) break;
      window.unshift(row);
      total += bytes;
    }
    const messages = parseAll(window);
    return {
      messages: applyCompactions(messages, this.#compactions()),
      truncated: window.length < rows.length,
      totalContentBytes: total,
    };
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    const leaf = this.#latestLeaf();
    return leaf === null ? null : parseStoredMessage(leaf.content);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    return parseAll(this.#rows().filter((row) => row.parentId === messageId));
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    return this.#pathRows(leafId).length;
  }

  async getNode(id: string): Promise<MessageNode | null> {
    const row = this.#row(id);
    return row === null ? null : nodeOf(row);
  }

  async getTree(options: { limit?: number } = {}): Promise<MessageNode[]> {
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (typeof limit !== "number" || Number.isNaN(limit) || limit < 0) {
      throw new ContextError("INVALID_INPUT", `getTree: limit must be a number ≥ 0, got ${String(limit)}`);
    }
    return this.#rows().slice(0, limit).map(nodeOf);
  }

  async getPathNodes(leafId?: string | null): Promise<MessageNode[]> {
    const rows = this.#pathRows(leafId);
    checkWholePath(
      rows.map((row) => ({ id: row.id, parent_id: row.parentId })),
      "getPathNodes",
    );
    return rows.map(nodeOf);
  }

  async getMessages(ids: readonly string[]): Promise<SessionMessage[]> {
    if (!Array.isArray(ids)) {
      throw new ContextError(
        "INVALID_INPUT",
        `getMessages: expected an array of ids, got ${describeValue(ids)}`,
      );
    }
    const rows: StoredRow[] = [];
    for (const id of ids) {
      const row = typeof id === "string" ? this.#row(id) : null;
      if (row !== null) rows.push(row);
    }
    return parseAll(rows);
  }

  async appendMessage(message: SessionMessage, parentId?: string | null): Promise<AppendedMessage> {
    const row = this.#insert(message, parentId, "appendMessage", new Date().toISOString());
    return { parentId: row.parentId, createdAt: row.createdAt };
  }

  async getPathTokens(leafId?: string | null): Promise<number> {
    return pathTokensWithOverlays(this.#pathRows(leafId), this.#compactions());
  }

  async getTokenCalibration(): Promise<number | null> {
    return this.sessions.calibrations.get(this.sessionId) ?? null;
  }

  async setTokenCalibration(calibration: number): Promise<void> {
    this.sessions.calibrations.set(this.sessionId, checkCalibration(calibration));
  }

  async importMessage(message: SessionMessage, parentId: string | null, createdAt: string): Promise<void> {
    if (parentId !== null) checkMessageId(parentId, "parentId", "importMessage");
    if (typeof createdAt !== "string" || Number.isNaN(Date.parse(createdAt))) {
      throw new ContextError(
        "INVALID_INPUT",
        `importMessage: createdAt must be an ISO date string, got ${describeValue(createdAt)}`,
      );
    }
    this.#insert(message, parentId, "importMessage", createdAt);
  }

  #insert(
    message: SessionMessage,
    parentId: string | null | undefined,
    operation: string,
    createdAt: string,
  ): StoredRow {
    const checked = checkSessionMessage(message, operation);
    if (parentId !== undefined && parentId !== null) checkMessageId(parentId, "parentId", operation);
    if (parentId === checked.id) {
      throw new ContextError(
        "INVALID_INPUT",
        `${operation}: message "${checked.id}" cannot be its own parent`,
      );
    }
    const content = serializeMessage(checked);
    const existing = this.sessions.messages.get(checked.id);
    if (existing !== undefined) {
      // An identical retry (its first attempt stored it) gets the stored row back; anything else is refused.
      const attempt = { sessionId: this.sessionId, parentId, content };
      if (isIdenticalRetry(existing, attempt)) return existing;
      throw storedIdError(operation, checked.id, existing, attempt);
    }
    const orphans = [...this.sessions.messages.values()]
      .filter((row) => row.sessionId === this.sessionId && row.parentId === checked.id)
      .slice(0, 3);
    if (orphans.length > 0) {
      throw new ContextError(
        "INVALID_INPUT",
        `${operation}: id "${checked.id}" is still the parent of stored messages (${orphans
          .map((row) => `"${row.id}"`)
          .join(
            ", ",
          )}; it was deleted without them); storing a new message under it could make a cycle: use another id`,
      );
    }
    let parent: string | null;
    if (parentId === undefined) parent = this.#latestLeaf()?.id ?? null;
    else if (parentId === null) parent = null;
    else {
      if (this.#row(parentId) === null) {
        throw new ContextError(
          "NOT_FOUND",
          `${operation}: parent "${parentId}" of message "${checked.id}" is not in this session`,
        );
      }
      parent = parentId;
    }
    const row: StoredRow = {
      id: checked.id,
      sessionId: this.sessionId,
      parentId: parent,
      role: checked.role,
      content,
      createdAt,
      order: this.sessions.nextOrder(),
      tokens: messageTokenStamp(checked),
    };
    this.sessions.messages.set(checked.id, row);
    return row;
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    const content = serializeMessage(checked);
    const row = this.#row(checked.id);
    if (row === null)
      throw new ContextError("NOT_FOUND", `updateMessage: no message "${checked.id}" in this session`);
    row.content = content;
    row.role = checked.role;
    row.tokens = messageTokenStamp(checked);
  }

  async deleteMessages(messageIds: readonly string[]): Promise<void> {
    if (!Array.isArray(messageIds)) {
      throw new ContextError(
        "INVALID_INPUT",
        `deleteMessages: expected an array of ids, got ${describeValue(messageIds)}`,
      );
    }
    for (const id of messageIds) {
      if (typeof id === "string" && this.#row(id) !== null) this.sessions.messages.delete(id);
    }
  }

  async clearMessages(): Promise<void> {
    this.sessions.clear(this.sessionId);
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
  ): Promise<StoredCompaction> {
    checkCompactionArguments(summary, fromMessageId, toMessageId);
    const newest = this.sessions.compactions.get(this.sessionId)?.at(-1);
    if (sameOverlay(newest, summary, fromMessageId, toMessageId)) return { ...newest };
    const compaction: StoredCompaction = {
      id: crypto.randomUUID(),
      summary,
      fromMessageId,
      toMessageId,
      createdAt: new Date().toISOString(),
    };
    const list = this.sessions.compactions.get(this.sessionId) ?? [];
    list.push(compaction);
    this.sessions.compactions.set(this.sessionId, list);
    return { ...compaction };
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    return this.#compactions().map((compaction) => ({ ...compaction }));
  }

  async searchMessages(query: string, limit = 20): Promise<SearchResult[]> {
    return this.sessions.search(query, limit, this.sessionId);
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  #row(id: string): StoredRow | null {
    const row = this.sessions.messages.get(id);
    return row !== undefined && row.sessionId === this.sessionId ? row : null;
  }

  /** This session's rows in the order they were stored. */
  #rows(): StoredRow[] {
    return [...this.sessions.messages.values()]
      .filter((row) => row.sessionId === this.sessionId)
      .sort((left, right) => left.order - right.order);
  }

  #compactions(): StoredCompaction[] {
    return this.sessions.compactions.get(this.sessionId) ?? [];
  }

  #latestLeaf(): StoredRow | null {
    const rows = this.#rows();
    const parents = new Set(rows.map((row) => row.parentId));
    for (let index = rows.length - 1; index >= 0; index--) {
      const row = rows[index] as StoredRow;
      if (!parents.has(row.id)) return row;
    }
    return null;
  }

  /** Rows root..leaf (default: the latest leaf); a parent deleted ends the path, as in the SQL stores. */
  #pathRows(leafId: string | null | undefined): StoredRow[] {
    const leaf = leafId === undefined || leafId === null ? this.#latestLeaf() : this.#row(leafId);
    const path: StoredRow[] = [];
    const seen = new Set<string>();
    for (let row = leaf; row !== null && path.length <= maximumPathLength && !seen.has(row.id); ) {
      seen.add(row.id);
      path.push(row);
      row = row.parentId === null ? null : this.#row(row.parentId);
    }
    return path.reverse();
  }

  #path(leafId: string | null | undefined): SessionMessage[] {
    const rows = this.#pathRows(leafId);
    checkWholePath(
      rows.map((row) => ({ id: row.id, parent_id: row.parentId })),
      "getHistory",
    );
    return parseAll(rows);
  }
}

function nodeOf(row: StoredRow): MessageNode {
  return { id: row.id, parentId: row.parentId, role: row.role, createdAt: row.createdAt };
}
