import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { type SearchCandidate, selectSearchHits } from "../search-hits.js";
import type { SearchResult, StoredCompaction } from "../session-store.js";
import type {
  AppendPlacement,
  AppendResult,
  IdHolder,
  MessageRecord,
  PathTotals,
  SessionStoreV1,
  StoredSearchHit,
} from "../session-store-v1.js";

interface StoredRecord extends MessageRecord {
  sessionId: string;
  content: string;
  text: string;
  /** Insertion number: the order of `readTree` and of the latest leaf. */
  order: number;
}

/**
 * The backing store of `InMemorySessionStore`: every session's records and overlays, as one database holds
 * them. Share one between stores to model one database (other sessions, a restart); `inMemoryBackend()`
 * holds one.
 */
export class InMemorySessions {
  /** Records by id: ids are unique across sessions, as in the SQL tables. */
  readonly records = new Map<string, StoredRecord>();
  readonly overlays = new Map<string, StoredCompaction[]>();
  /** Each session's token calibration. */
  readonly calibrations = new Map<string, number>();
  #order = 0;

  /** @internal The next insertion number. */
  nextOrder(): number {
    return this.#order++;
  }

  /** Search over every session's messages (or one session's), by the words of their text. */
  search(query: string, limit: number, sessionId?: string): SearchResult[] {
    return selectSearchHits(this.candidates(query, limit, sessionId), limit);
  }

  /** @internal The records that hold a query word, scored by how many they hold, best first. */
  candidates(query: string, limit: number, sessionId?: string): SearchCandidate[] {
    if (typeof query !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `search: the query must be a string, got ${describeValue(query)}`,
      );
    }
    const words = new Set(wordsOf(query));
    if (words.size === 0) return [];
    const hits: { result: SearchCandidate; score: number; order: number }[] = [];
    for (const record of this.records.values()) {
      if (sessionId !== undefined && record.sessionId !== sessionId) continue;
      const have = new Set(wordsOf(record.text));
      let score = 0;
      for (const word of words) if (have.has(word)) score++;
      if (score === 0) continue;
      const result: SearchCandidate = {
        id: record.id,
        role: record.role,
        text: record.text,
        createdAt: record.createdAt ?? "",
        score,
        matchedBy: "text",
        parentId: record.parentId,
        grandparentId:
          record.parentId === null ? null : (this.records.get(record.parentId)?.parentId ?? null),
      };
      if (sessionId === undefined) result.sessionId = record.sessionId;
      hits.push({ result, score, order: record.order });
    }
    hits.sort((left, right) => right.score - left.score || left.order - right.order);
    return hits.slice(0, Math.max(0, Math.floor(limit))).map((hit) => hit.result);
  }

  /** Removes every record, overlay and calibration of a session. */
  clear(sessionId: string): void {
    for (const [id, record] of this.records) if (record.sessionId === sessionId) this.records.delete(id);
    this.overlays.delete(sessionId);
    this.calibrations.delete(sessionId);
  }
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * A session store in memory (on an `InMemorySessions`, shared or its own), for tests and quick starts: the
 * storage contract `SessionStoreV1` and nothing more, as a third-party store would write it. Every method
 * runs to its end without a pause, which is what makes an append atomic here; a store over asynchronous
 * storage needs a lock or a transaction instead.
 */
export class InMemorySessionStore implements SessionStoreV1 {
  readonly specificationVersion = "v1";
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

  async readPath(
    leafId: string | undefined,
    options: { limit: number; content: boolean },
  ): Promise<MessageRecord[]> {
    return this.#path(leafId, options.limit)
      .reverse()
      .map((stored) => copy(stored, options.content));
  }

  async readMessages(ids: readonly string[]): Promise<MessageRecord[]> {
    const found: MessageRecord[] = [];
    for (const id of ids) {
      const record = this.#record(id);
      if (record !== null) found.push(copy(record, true));
    }
    return found;
  }

  async readChildren(parentId: string): Promise<MessageRecord[]> {
    return this.#records()
      .filter((record) => record.parentId === parentId)
      .map((record) => copy(record, true));
  }

  async readTree(limit: number): Promise<MessageRecord[]> {
    return this.#records()
      .slice(0, limit)
      .map((record) => copy(record, false));
  }

  async append(records: readonly MessageRecord[], placement: AppendPlacement): Promise<AppendResult> {
    const leaf = this.#latestLeaf();
    if (placement.expectedLeafId !== undefined && (leaf?.id ?? null) !== placement.expectedLeafId) {
      return { status: "stale-leaf", leafId: leaf?.id ?? null };
    }
    let parentId: string | null;
    if (placement.parentId === undefined) parentId = leaf?.id ?? null;
    else if (placement.parentId === null) parentId = null;
    else if (this.#record(placement.parentId) === null) {
      return { status: "parent-missing", parentId: placement.parentId };
    } else parentId = placement.parentId;
    for (const [index, record] of records.entries()) {
      const holder = this.sessions.records.get(record.id);
      if (holder !== undefined) return { status: "id-taken", index, holder: copyWithSession(holder) };
      if (this.#records().some((stored) => stored.parentId === record.id)) {
        return { status: "still-a-parent", index };
      }
    }
    let parent = parentId;
    for (const record of records) {
      this.sessions.records.set(record.id, {
        ...record,
        parentId: parent,
        sessionId: this.sessionId,
        content: record.content ?? "",
        text: record.text ?? "",
        order: this.sessions.nextOrder(),
      });
      parent = record.id;
    }
    return { status: "appended", parentId };
  }

  async update(record: MessageRecord): Promise<boolean> {
    const stored = this.#record(record.id);
    if (stored === null) return false;
    const { parentId: _parent, createdAt: _createdAt, ...changes } = record;
    Object.assign(stored, changes);
    return true;
  }

  async delete(ids: readonly string[]): Promise<void> {
    for (const id of ids) if (this.#record(id) !== null) this.sessions.records.delete(id);
  }

  async clear(): Promise<void> {
    this.sessions.clear(this.sessionId);
  }

  async addOverlay(overlay: StoredCompaction): Promise<void> {
    const list = this.sessions.overlays.get(this.sessionId) ?? [];
    list.push({ ...overlay });
    this.sessions.overlays.set(this.sessionId, list);
  }

  async readOverlays(): Promise<StoredCompaction[]> {
    return (this.sessions.overlays.get(this.sessionId) ?? []).map((overlay) => ({ ...overlay }));
  }

  async search(query: string, limit: number): Promise<StoredSearchHit[]> {
    return this.sessions
      .candidates(query, limit, this.sessionId)
      .map(({ sessionId: _sessionId, ...hit }) => hit);
  }

  async readCalibration(): Promise<number | null> {
    return this.sessions.calibrations.get(this.sessionId) ?? null;
  }

  async writeCalibration(calibration: number): Promise<void> {
    this.sessions.calibrations.set(this.sessionId, calibration);
  }

  async readPathTotals(leafId: string | undefined): Promise<PathTotals | null> {
    // Summed along the path here (memory reads cost nothing); a SQL store keeps them on the leaf's row.
    const totals: PathTotals = { length: 0, tokens: 0 };
    for (const record of this.#path(leafId, Number.MAX_SAFE_INTEGER)) {
      if (record.tokens === undefined) return null;
      totals.length++;
      totals.tokens += record.tokens;
    }
    return totals;
  }

  /** The path leaf first: at most `limit` records, ending at a root, a missing parent or a record seen before. */
  #path(leafId: string | undefined, limit: number): StoredRecord[] {
    let record = leafId === undefined ? this.#latestLeaf() : this.#record(leafId);
    const path: StoredRecord[] = [];
    const seen = new Set<string>();
    while (record !== null && path.length < limit && !seen.has(record.id)) {
      seen.add(record.id);
      path.push(record);
      record = record.parentId === null ? null : this.#record(record.parentId);
    }
    return path;
  }

  #record(id: string): StoredRecord | null {
    const record = this.sessions.records.get(id);
    return record !== undefined && record.sessionId === this.sessionId ? record : null;
  }

  /** This session's records in the order they were stored. */
  #records(): StoredRecord[] {
    return [...this.sessions.records.values()]
      .filter((record) => record.sessionId === this.sessionId)
      .sort((left, right) => left.order - right.order);
  }

  #latestLeaf(): StoredRecord | null {
    const records = this.#records();
    const parents = new Set(records.map((record) => record.parentId));
    for (let index = records.length - 1; index >= 0; index--) {
      const record = records[index] as StoredRecord;
      if (!parents.has(record.id)) return record;
    }
    return null;
  }
}

/** A copy of a stored record as the contract returns it (reads are copies, as from a database). */
function copy(record: StoredRecord, content: boolean): MessageRecord {
  const result: MessageRecord = {
    id: record.id,
    parentId: record.parentId,
    role: record.role,
    createdAt: record.createdAt,
  };
  if (record.bytes !== undefined) result.bytes = record.bytes;
  if (record.tokens !== undefined) result.tokens = record.tokens;
  if (content) result.content = record.content;
  return result;
}

function copyWithSession(record: StoredRecord): IdHolder {
  return { ...copy(record, true), sessionId: record.sessionId, content: record.content };
}
