import { ContextError } from "@contextblocks/core";
import { clipped, describeValue, isWellFormed } from "@contextblocks/core/store-kit";
import { importTime } from "./import-time.js";
import { checkMessageId, checkSessionMessage, type SessionMessage, textOfMessage } from "./message.js";
import { estimateMessageTokens, messageTokenStamp, pathTokensWithOverlays } from "./message-tokens.js";
import { applyCompactions, sameOverlay } from "./overlays.js";
import { candidateCount, selectSearchHits } from "./search-hits.js";
import { rerankSearchCandidates } from "./search-rerank.js";
import type {
  AppendedMessage,
  MessageNode,
  PathMessagesResult,
  RecentHistoryResult,
  SearchResult,
  SessionStore,
  StoredCompaction,
} from "./session-store.js";
import type { AppendResult, MessageRecord, PathTotals, SessionStoreV1 } from "./session-store-v1.js";
import {
  checkCalibration,
  checkCompactionArguments,
  checkRecentHistoryBudget,
  checkSearchLimit,
  maximumSearchLimit,
} from "./store-arguments.js";
import { isIdenticalRetry, storedIdError } from "./stored-id.js";
import { checkWholePath, maximumPathLength, parseStoredMessage, serializeMessage } from "./stored-message.js";

/** Records a budgeted leaf-first read asks for first; doubled per read, up to `largestPathChunk`. */
const firstPathChunk = 32;
const largestPathChunk = 4_096;

/** `appendChain(messages, parentId, options)`. */
export interface AppendChainOptions {
  /** Refuse (`CONFLICT`) unless this is still the session's latest leaf (`null`: the session is empty). */
  expectedLeafId?: string | null | undefined;
  /** Kept as each message's stored time (an import); default now. */
  createdAt?: string | undefined;
  /** The operation named in refusals. */
  operation?: string | undefined;
}

/**
 * The message tree: every rule of a session's messages, written once over the storage contract
 * `SessionStoreV1`. Input checks, identical retries, the wording of refusals, compaction overlays, token
 * stamps and calibration, path bounds and byte budgets all live here; the store below keeps records and
 * answers the conflicts only it can see atomically (a stale leaf, a taken id, an id still a parent). Every
 * operation costs the store the reads it would cost without the rules: an append is one `append` call.
 */
export class MessageTree implements SessionStore {
  readonly storage: SessionStoreV1;
  /** The calibration of a store that keeps none (`readCalibration` absent): lives as long as this tree. */
  #calibration: number | null = null;

  /** Full-text search over this session's messages, where the store can search. */
  readonly searchMessages?: (query: string, limit?: number) => Promise<SearchResult[]>;

  /**
   * The stored messages of the path, overlays not applied, in one read, where the store reads whole paths
   * (`wholePathReads`): what `Session.history` and `historyBatches` then read instead of planning the path
   * without content and reading content one batch at a time.
   */
  readonly getPathMessages?: (
    leafId?: string | null,
    options?: { maxBytes?: number; newestFirst?: boolean },
  ) => Promise<PathMessagesResult>;

  constructor(storage: SessionStoreV1) {
    if (storage?.specificationVersion !== "v1") {
      throw new ContextError(
        "INVALID_CONFIG",
        `MessageTree: expected a store with specificationVersion "v1", got ${describeValue(storage)}`,
      );
    }
    this.storage = storage;
    if (typeof storage.search === "function")
      this.searchMessages = (query, limit) => this.#search(query, limit);
    if (storage.wholePathReads === true)
      this.getPathMessages = (leafId, options) => this.#pathMessages(leafId, options);
  }

  get sessionId(): string {
    return this.storage.sessionId;
  }

  // ── Reads ──────────────────────────────────────────────────────────────────────────────────────────

  async getMessage(id: string): Promise<SessionMessage | null> {
    if (!isHoldableId(id)) return null;
    const [record] = await this.storage.readMessages([id]);
    return record === undefined ? null : messageOf(record);
  }

  async getMessages(ids: readonly string[]): Promise<SessionMessage[]> {
    if (!Array.isArray(ids)) {
      throw new ContextError(
        "INVALID_INPUT",
        `getMessages: expected an array of ids, got ${describeValue(ids)}`,
      );
    }
    const wanted = ids.filter(isHoldableId);
    if (wanted.length === 0) return [];
    return messagesOf(await this.storage.readMessages(wanted));
  }

  async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    checkLeafId(leafId, "getHistory");
    const records = await this.#wholePath(leafId, true, "getHistory");
    if (records.length === 0) return [];
    return applyCompactions(messagesOf(records), await this.storage.readOverlays());
  }

  async getLatestLeaf(): Promise<SessionMessage | null> {
    const [leaf] = await this.storage.readPath(undefined, { limit: 1, content: true });
    return leaf === undefined ? null : messageOf(leaf);
  }

  async getBranches(messageId: string): Promise<SessionMessage[]> {
    if (!isHoldableId(messageId)) return [];
    return messagesOf(await this.storage.readChildren(messageId));
  }

  async getPathLength(leafId?: string | null): Promise<number> {
    checkLeafId(leafId, "getPathLength");
    const totals = await this.#totals(leafId);
    if (totals !== null) return totals.length;
    return (await this.#path(leafId, false)).length;
  }

  async getNode(id: string): Promise<MessageNode | null> {
    if (!isHoldableId(id)) return null;
    const [record] = await this.storage.readMessages([id]);
    return record === undefined ? null : nodeOf(record);
  }

  async getTree(options: { limit?: number } = {}): Promise<MessageNode[]> {
    const limit = options?.limit ?? Number.MAX_SAFE_INTEGER;
    if (typeof limit !== "number" || Number.isNaN(limit) || limit < 0) {
      throw new ContextError("INVALID_INPUT", `getTree: limit must be a number ≥ 0, got ${String(limit)}`);
    }
    if (limit === 0) return [];
    return (await this.storage.readTree(Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER))).map(nodeOf);
  }

  async getPathNodes(leafId?: string | null): Promise<MessageNode[]> {
    checkLeafId(leafId, "getPathNodes");
    return (await this.#wholePath(leafId, false, "getPathNodes")).map(nodeOf);
  }

  async getPathTokens(leafId?: string | null): Promise<number> {
    checkLeafId(leafId, "getPathTokens");
    const overlays = await this.storage.readOverlays();
    // Without overlays the path's tokens are the stamps summed, which a store may keep on the leaf.
    if (overlays.length === 0) {
      const totals = await this.#totals(leafId);
      if (totals !== null) return totals.tokens;
    }
    const records = await this.#path(leafId, false);
    const unstamped = records.filter((record) => record.tokens === undefined).map((record) => record.id);
    const estimated = new Map<string, number>();
    if (unstamped.length > 0) {
      for (const record of await this.storage.readMessages(unstamped)) {
        const message = messageOf(record);
        estimated.set(record.id, message === null ? 0 : estimateMessageTokens([message]));
      }
    }
    const rows = records.map((record) => ({
      id: record.id,
      role: record.role,
      tokens: record.tokens ?? estimated.get(record.id) ?? 0,
    }));
    return pathTokensWithOverlays(rows, overlays);
  }

  /**
   * `getPathMessages`. Leaf first under a budget (`newestFirst` with `maxBytes`), the path is read in growing
   * pieces from the leaf, each going on where the last stopped, until the stored bytes pass the budget: only
   * the newest part of a long path is read. Root first, the budget is known only at the root, so the whole
   * path is read and the caller cuts.
   */
  async #pathMessages(
    leafId?: string | null,
    options?: { maxBytes?: number; newestFirst?: boolean },
  ): Promise<PathMessagesResult> {
    checkLeafId(leafId, "getPathMessages");
    const maxBytes = options?.maxBytes;
    if (options?.newestFirst !== true || typeof maxBytes !== "number" || !Number.isFinite(maxBytes)) {
      return { messages: messagesOf(await this.#wholePath(leafId, true, "getHistory")), truncated: false };
    }
    const leafFirst: MessageRecord[] = [];
    let total = 0;
    for await (const record of this.#leafFirst(leafId)) {
      leafFirst.push(record);
      total += record.bytes ?? utf8Bytes(record.content ?? "");
      if (total > maxBytes) {
        return { messages: messagesOf(leafFirst.reverse()), truncated: record.parentId !== null };
      }
      if (leafFirst.length > maximumPathLength) break;
    }
    const ordered = leafFirst.reverse();
    checkWholePath(
      ordered.map((record) => ({ id: record.id, parent_id: record.parentId })),
      "getHistory",
    );
    return { messages: messagesOf(ordered), truncated: false };
  }

  async getRecentHistory(
    leafId: string | null | undefined,
    maxBytes: number,
    minMessages = 1,
  ): Promise<RecentHistoryResult> {
    checkRecentHistoryBudget(maxBytes);
    checkLeafId(leafId, "getRecentHistory");
    const floor = Math.max(1, Math.floor(minMessages));
    // A store that reads whole paths is read from the leaf with content, only as far as the window goes.
    if (this.storage.wholePathReads === true) return this.#recentFromLeaf(leafId, maxBytes, floor);
    const nodes = await this.#path(leafId, false);
    // The window is chosen on the sizes the store keeps; a store that keeps none is read whole.
    const sized = nodes.every((node) => node.bytes !== undefined);
    const records = sized ? nodes : await this.#path(leafId, true);
    let start = records.length;
    let total = 0;
    while (start > 0) {
      const record = records[start - 1] as MessageRecord;
      const bytes = record.bytes ?? utf8Bytes(record.content ?? "");
      if (records.length - start >= floor && total + bytes > maxBytes) break;
      total += bytes;
      start--;
    }
    const window = records.slice(start);
    const withContent = sized ? await this.storage.readMessages(window.map((record) => record.id)) : window;
    return {
      messages: applyCompactions(messagesOf(withContent), await this.storage.readOverlays()),
      truncated: start > 0,
      totalContentBytes: total,
    };
  }

  async getCompactions(): Promise<StoredCompaction[]> {
    return this.storage.readOverlays();
  }

  async getTokenCalibration(): Promise<number | null> {
    if (typeof this.storage.readCalibration !== "function") return this.#calibration;
    return this.storage.readCalibration();
  }

  // ── Writes ─────────────────────────────────────────────────────────────────────────────────────────

  async appendMessage(message: SessionMessage, parentId?: string | null): Promise<AppendedMessage> {
    return this.appendChain([message], parentId, { operation: "appendMessage" });
  }

  async importMessage(message: SessionMessage, parentId: string | null, createdAt: string): Promise<void> {
    if (parentId !== null) checkMessageId(parentId, "parentId", "importMessage");
    if (typeof createdAt !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `importMessage: createdAt must be an ISO date string, got ${describeValue(createdAt)}`,
      );
    }
    const time = importTime(createdAt, "importMessage");
    await this.appendChain([message], parentId, { operation: "importMessage", createdAt: time });
  }

  /**
   * Stores messages as one chain, all or nothing: the first under `parentId` (`undefined`: the latest leaf,
   * `null`: a new root), each next one under the one before. A chain whose first attempt was stored (an
   * identical retry) succeeds without second copies. Reports where the first message went.
   */
  async appendChain(
    messages: readonly SessionMessage[],
    parentId: string | null | undefined,
    options: AppendChainOptions = {},
  ): Promise<AppendedMessage> {
    const operation = options.operation ?? "appendMessages";
    const checked = messages.map((message) => checkSessionMessage(message, operation));
    if (parentId !== undefined && parentId !== null) checkMessageId(parentId, "parentId", operation);
    const seen = new Set<string>();
    for (const message of checked) {
      if (seen.has(message.id)) {
        throw new ContextError(
          "INVALID_INPUT",
          `${operation}: message id "${clipped(message.id)}" appears twice in one append`,
        );
      }
      seen.add(message.id);
    }
    if (checked[0] !== undefined && parentId === checked[0].id) {
      throw new ContextError("INVALID_INPUT", `${operation}: message "${parentId}" cannot be its own parent`);
    }
    const createdAt = options.createdAt ?? new Date().toISOString();
    let records = checked.map((message) => recordOf(message, createdAt));
    let parent = parentId;
    let expectedLeafId = options.expectedLeafId;
    let placed: AppendedMessage | null = null;
    while (records.length > 0) {
      const result = await this.storage.append(records, { parentId: parent, expectedLeafId });
      if (result.status === "appended") return placed ?? { parentId: result.parentId, createdAt };
      const first = records[0] as MessageRecord;
      if (result.status === "id-taken" && result.index === 0) {
        const attempt = { sessionId: this.sessionId, parentId: parent, content: first.content as string };
        if (!isIdenticalRetry(result.holder, attempt)) {
          throw storedIdError(operation, first.id, result.holder, attempt);
        }
        // Stored by an earlier attempt: the rest of the chain goes on under it.
        placed ??= { parentId: result.holder.parentId, createdAt: result.holder.createdAt };
        records = records.slice(1);
        parent = first.id;
        if (expectedLeafId !== undefined) expectedLeafId = first.id;
        continue;
      }
      throw refusal(operation, result, records, parent, expectedLeafId, this.sessionId);
    }
    return placed ?? { parentId: parentId ?? null, createdAt };
  }

  async updateMessage(message: SessionMessage): Promise<void> {
    const checked = checkSessionMessage(message, "updateMessage");
    const record = recordOf(checked, null);
    if (!(await this.storage.update(record))) {
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
    const ids = [...new Set(messageIds.filter(isHoldableId))];
    if (ids.length > 0) await this.storage.delete(ids);
  }

  async clearMessages(): Promise<void> {
    this.#calibration = null;
    await this.storage.clear();
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
  ): Promise<StoredCompaction> {
    checkCompactionArguments(summary, fromMessageId, toMessageId);
    // A retried compaction whose first attempt was stored returns that overlay instead of a second one.
    const newest =
      typeof this.storage.readNewestOverlay === "function"
        ? ((await this.storage.readNewestOverlay()) ?? undefined)
        : (await this.storage.readOverlays()).at(-1);
    if (sameOverlay(newest, summary, fromMessageId, toMessageId)) return { ...newest };
    await this.#checkCompactionRange(fromMessageId, toMessageId);
    const overlay: StoredCompaction = {
      id: crypto.randomUUID(),
      summary,
      fromMessageId,
      toMessageId,
      createdAt: new Date().toISOString(),
    };
    await this.storage.addOverlay(overlay);
    return { ...overlay };
  }

  async setTokenCalibration(calibration: number): Promise<void> {
    const checked = checkCalibration(calibration);
    if (typeof this.storage.writeCalibration !== "function") this.#calibration = checked;
    else await this.storage.writeCalibration(checked);
  }

  // ── Internals ──────────────────────────────────────────────────────────────────────────────────────

  async #search(query: string, limit = 20): Promise<SearchResult[]> {
    if (typeof query !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `search: the query must be a string, got ${describeValue(query)}`,
      );
    }
    const whole = checkSearchLimit(limit);
    const candidates = await (this.storage.search as NonNullable<SessionStoreV1["search"]>)(
      query,
      candidateCount(whole, maximumSearchLimit),
    );
    return selectSearchHits(rerankSearchCandidates(query, candidates), whole);
  }

  /**
   * Both ends of a range must be messages of this session: an unknown id, or another session's, would be
   * stored and never shown, so it is refused by name. One content-free read of each end (one row each on a
   * Durable Object's keyed layout). Whether `fromMessageId` comes before `toMessageId` on its branch is not
   * checked: that would read the whole range, and an overlay must cost what agents' does (one row written);
   * such a range is stored and has no effect (`applyCompactions`).
   */
  async #checkCompactionRange(fromMessageId: string, toMessageId: string): Promise<void> {
    for (const [end, id] of [
      ["fromMessageId", fromMessageId],
      ["toMessageId", toMessageId],
    ] as const) {
      if (end === "toMessageId" && id === fromMessageId) return;
      if (!(await this.#isStored(id))) {
        throw new ContextError(
          "INVALID_INPUT",
          `addCompaction: ${end} "${clipped(id)}" is not a message of this session; nothing was stored`,
        );
      }
    }
  }

  /** Whether `id` is a message of this session: its path's totals where the store keeps them, else its record. */
  async #isStored(id: string): Promise<boolean> {
    if (!isHoldableId(id)) return false;
    const totals = await this.storage.readPathTotals?.(id);
    if (totals !== undefined && totals !== null) return totals.length > 0;
    const [record] = await this.storage.readPath(id, { limit: 1, content: false });
    return record?.id === id;
  }

  /** `getRecentHistory` on a store that reads whole paths: the newest records that fit, read leaf first. */
  async #recentFromLeaf(
    leafId: string | null | undefined,
    maxBytes: number,
    floor: number,
  ): Promise<RecentHistoryResult> {
    const window: MessageRecord[] = [];
    let total = 0;
    let truncated = false;
    for await (const record of this.#leafFirst(leafId)) {
      const bytes = record.bytes ?? utf8Bytes(record.content ?? "");
      if ((window.length >= floor && total + bytes > maxBytes) || window.length > maximumPathLength) {
        truncated = true;
        break;
      }
      total += bytes;
      window.push(record);
    }
    return {
      messages: applyCompactions(messagesOf(window.reverse()), await this.storage.readOverlays()),
      truncated,
      totalContentBytes: total,
    };
  }

  /**
   * The path's records leaf first, with content, read in growing pieces from the leaf, each going on where
   * the last stopped: a reader that stops early never reads the rest. Ends at a root, a parent not in this
   * session, or a record seen before.
   */
  async *#leafFirst(leafId: string | null | undefined): AsyncGenerator<MessageRecord, void, undefined> {
    if (isUnholdableLeaf(leafId)) return;
    const seen = new Set<string>();
    let next = leafId ?? undefined;
    for (let chunk = firstPathChunk; ; chunk = Math.min(chunk * 2, largestPathChunk)) {
      const records = await this.storage.readPath(next, { limit: chunk, content: true });
      for (let index = records.length - 1; index >= 0; index--) {
        const record = records[index] as MessageRecord;
        if (seen.has(record.id)) return;
        seen.add(record.id);
        yield record;
      }
      const oldest = records[0];
      // Fewer than asked: the walk reached a root, a parent not in this session, or a record seen before.
      if (oldest === undefined || oldest.parentId === null || records.length < chunk) return;
      next = oldest.parentId;
    }
  }

  /** The path's records root first, at most one past the bound (so an over-long path can be told). */
  #path(leafId: string | null | undefined, content: boolean): Promise<MessageRecord[]> {
    if (isUnholdableLeaf(leafId)) return Promise.resolve([]);
    return this.storage.readPath(leafId ?? undefined, { limit: maximumPathLength + 1, content });
  }

  /** The path's length and summed stamps where the store keeps them (`readPathTotals`), else `null`. */
  async #totals(leafId: string | null | undefined): Promise<PathTotals | null> {
    if (typeof this.storage.readPathTotals !== "function" || isUnholdableLeaf(leafId)) return null;
    return this.storage.readPathTotals(leafId ?? undefined);
  }

  /** The whole path, refusing one longer than the bound rather than dropping its oldest part silently. */
  async #wholePath(
    leafId: string | null | undefined,
    content: boolean,
    operation: string,
  ): Promise<MessageRecord[]> {
    const records = await this.#path(leafId, content);
    checkWholePath(
      records.map((record) => ({ id: record.id, parent_id: record.parentId })),
      operation,
    );
    return records;
  }
}

/** The refusal of an append the store answered with a conflict, worded once for every store. */
function refusal(
  operation: string,
  result: Exclude<AppendResult, { status: "appended" }>,
  records: readonly MessageRecord[],
  parentId: string | null | undefined,
  expectedLeafId: string | null | undefined,
  sessionId: string,
): ContextError {
  switch (result.status) {
    case "stale-leaf":
      return new ContextError(
        "CONFLICT",
        `${operation}: the session's latest message is ${quoted(result.leafId)}, not ${quoted(expectedLeafId ?? null)} (another writer appended first); nothing was stored`,
      );
    case "parent-missing":
      return new ContextError(
        "NOT_FOUND",
        `${operation}: parent "${result.parentId}" of message "${records[0]?.id}" is not in this session`,
      );
    case "id-taken": {
      const record = records[result.index] as MessageRecord;
      const attempt = {
        sessionId,
        parentId: result.index === 0 ? parentId : records[result.index - 1]?.id,
        content: record.content as string,
      };
      return storedIdError(operation, record.id, result.holder, attempt);
    }
    case "still-a-parent":
      return new ContextError(
        "INVALID_INPUT",
        `${operation}: id "${clipped(String(records[result.index]?.id))}" is still the parent of stored messages of this session (it was deleted without them); storing a new message under it could make a cycle: use another id`,
      );
  }
}

/**
 * An id a store may hold: a string without a lone UTF-16 surrogate. Appends refuse such an id (stores keep
 * UTF-8, where it would become U+FFFD and alias another id), so a read or delete of one finds nothing and
 * never reaches the store (a store keyed by `encodeURIComponent` would throw `URIError`).
 */
function isHoldableId(id: unknown): id is string {
  return typeof id === "string" && isWellFormed(id);
}

/** A read's leaf that names no message any store holds (`undefined` and `null` name the latest leaf). */
function isUnholdableLeaf(leafId: string | null | undefined): boolean {
  return typeof leafId === "string" && !isHoldableId(leafId);
}

/**
 * A read's leaf: `undefined` or `null` for the latest leaf, else a message id. An empty id is refused as
 * `parentId: ""` is, instead of reading as an unknown leaf (`[]`), which looks like an empty session.
 */
function checkLeafId(leafId: unknown, operation: string): void {
  if (leafId !== undefined && leafId !== null && (typeof leafId !== "string" || leafId.length === 0)) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: leafId must be a non-empty string (undefined or null: the latest leaf), got ${describeValue(leafId)}`,
    );
  }
}

function quoted(id: string | null): string {
  return id === null ? "none (an empty session)" : `"${id}"`;
}

/** The record a checked message is stored as: its text, sizes and stamps computed once, here. */
function recordOf(message: SessionMessage, createdAt: string | null): MessageRecord {
  const content = serializeMessage(message);
  return {
    id: message.id,
    parentId: null,
    role: message.role,
    content,
    createdAt,
    bytes: utf8Bytes(content),
    tokens: messageTokenStamp(message),
    text: textOfMessage(message),
  };
}

function messageOf(record: MessageRecord): SessionMessage | null {
  return typeof record.content === "string" ? parseStoredMessage(record.content) : null;
}

/** The messages of records, skipping records that hold no message (hand-edited, another writer). */
function messagesOf(records: readonly MessageRecord[]): SessionMessage[] {
  const messages: SessionMessage[] = [];
  for (const record of records) {
    const message = messageOf(record);
    if (message !== null) messages.push(message);
  }
  return messages;
}

function nodeOf(record: MessageRecord): MessageNode {
  return { id: record.id, parentId: record.parentId, role: record.role, createdAt: record.createdAt };
}

const encoder = new TextEncoder();

function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}
