import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { mentionsDate, messageFieldsOf, planQuery, type QueryPlan, tokenize } from "@contextblocks/text";
import { type SearchCandidate, selectSearchHits } from "../search-hits.js";
import { defaultSearchRanking } from "../search-ranking.js";
import { rerankSearchCandidates } from "../search-rerank.js";
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
    return selectSearchHits(rerankSearchCandidates(query, this.candidates(query, limit, sessionId)), limit);
  }

  /**
   * @internal The records that hold a query term or whose replies do, best first: the words stemmed and
   * stopwords left out as the SQL stores' full-text indexes do (`@contextblocks/text`), each term weighed by
   * how rare it is (BM25 over the records searched), a record's two turns before it counted as its context
   * and its replies lending it a share of their score (`defaultSearchRanking`), so every backend ranks alike.
   */
  candidates(query: string, limit: number, sessionId?: string): SearchCandidate[] {
    if (typeof query !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `search: the query must be a string, got ${describeValue(query)}`,
      );
    }
    const plan = planQuery(query);
    if (plan === null) return [];
    const records = [...this.records.values()].filter(
      (record) => sessionId === undefined || record.sessionId === sessionId,
    );
    const scores = rankRecords(plan, records, (id) => this.records.get(id));
    const hits: RankedHit[] = [];
    const words = new Set(plan.terms.map((term) => term.word));
    const when = plan.asksWhen;
    for (const [id, { score: bm25, own }] of scores) {
      const record = this.records.get(id);
      if (record === undefined || bm25 <= 0) continue;
      // As the SQL stores weigh a turn: its speaker named in the query, its words saying when to a "when" question.
      const fields = fieldsOf(record);
      const speaker = words.has(fields.speaker) ? 1 + defaultSearchRanking.speakerBoost : 1;
      const dated = when && mentionsDate(record.text) ? 1 + defaultSearchRanking.datedBoost : 1;
      const score = bm25 * speaker * dated;
      const result: SearchCandidate = {
        id: record.id,
        role: record.role,
        text: record.text,
        createdAt: record.createdAt ?? "",
        score,
        matchedBy: own ? "text" : "neighbours",
        parentId: record.parentId,
        grandparentId:
          record.parentId === null ? null : (this.records.get(record.parentId)?.parentId ?? null),
      };
      if (sessionId === undefined) result.sessionId = record.sessionId;
      hits.push({
        result,
        score,
        order: record.order,
        session: record.sessionId,
        day: fields.day,
        rank: score,
      });
    }
    addDayAndNear(hits);
    hits.sort((left, right) => right.rank - left.rank || left.order - right.order);
    return hits.slice(0, Math.max(0, Math.floor(limit))).map((hit) => hit.result);
  }

  /** Removes every record, overlay and calibration of a session. */
  clear(sessionId: string): void {
    for (const [id, record] of this.records) if (record.sessionId === sessionId) this.records.delete(id);
    this.overlays.delete(sessionId);
    this.calibrations.delete(sessionId);
  }
}

interface RankedHit {
  result: SearchCandidate;
  /** Its relevance (what the hit selection reads). */
  score: number;
  order: number;
  session: string;
  /** The UTC day of its `createdAt`. */
  day: string;
  /** What it is ordered by: its score with the shares of its day and of the turns near it. */
  rank: number;
}

/**
 * As the SQL stores order their candidates: `dayShare` of the best score of a hit's day (in its session)
 * added, and `nearShare` of the best score within `nearTurns` turns (in its session) when every hit is of
 * one day.
 */
function addDayAndNear(hits: RankedHit[]): void {
  const { dayShare, nearShare, nearTurns } = defaultSearchRanking;
  const bestOfDay = new Map<string, number>();
  const bySession = new Map<string, RankedHit[]>();
  for (const hit of hits) {
    const key = `${hit.session}\u0000${hit.day}`;
    bestOfDay.set(key, Math.max(bestOfDay.get(key) ?? 0, hit.score));
    const list = bySession.get(hit.session) ?? [];
    list.push(hit);
    bySession.set(hit.session, list);
  }
  for (const hit of hits) hit.rank += dayShare * (bestOfDay.get(`${hit.session}\u0000${hit.day}`) ?? 0);
  if (nearShare <= 0) return;
  if (new Set(hits.map((hit) => hit.day)).size > 1) return;
  for (const list of bySession.values()) {
    // In insertion order, each hit's neighbours within `nearTurns` are the few on either side of it.
    list.sort((left, right) => left.order - right.order);
    const scores = list.map((hit) => hit.score);
    list.forEach((hit, index) => {
      let near = 0;
      for (let other = index; other >= 0 && hit.order - (list[other]?.order ?? 0) <= nearTurns; other--)
        near = Math.max(near, scores[other] ?? 0);
      for (
        let other = index + 1;
        other < list.length && (list[other]?.order ?? 0) - hit.order <= nearTurns;
        other++
      )
        near = Math.max(near, scores[other] ?? 0);
      hit.rank += nearShare * near;
    });
  }
}

/**
 * Who spoke a record and on which day, as the SQL stores index them (`messageFieldsOf`: its metadata's
 * speaker, else a "Name:" label, else its role; the day of the message's `createdAt`, else of its storing).
 */
interface StoredFields {
  metadata?: unknown;
  createdAt?: unknown;
}

function fieldsOf(record: StoredRecord): { speaker: string; day: string } {
  let message: StoredFields | null;
  try {
    message = JSON.parse(record.content) as StoredFields | null;
  } catch {
    message = null;
  }
  const fields = messageFieldsOf(
    { role: record.role, metadata: message?.metadata, createdAt: message?.createdAt },
    record.text,
  );
  return { speaker: fields.speaker, day: fields.time ?? (record.createdAt ?? "").slice(0, 10) };
}

/** BM25's term-frequency saturation and length normalisation, FTS5's defaults. */
const k1 = 1.2;
const b = 0.75;

/**
 * Each record's score for the plan's terms: BM25 of its own text, plus `contextWeight` of the turns before
 * it, plus `afterShare` of its children's own score (squared: its grandchildren's). `own`: its text holds a term.
 */
function rankRecords(
  plan: QueryPlan,
  records: readonly StoredRecord[],
  byId: (id: string) => StoredRecord | undefined,
): Map<string, { score: number; own: boolean }> {
  const ranking = defaultSearchRanking;
  const wanted = new Set(plan.terms.map((term) => term.stem));
  const stems = new Map<string, string[]>();
  for (const record of records)
    stems.set(
      record.id,
      tokenize(record.text).map((token) => token.stem),
    );
  const frequency = new Map<string, number>();
  let length = 0;
  for (const list of stems.values()) {
    length += list.length;
    for (const stem of new Set(list))
      if (wanted.has(stem)) frequency.set(stem, (frequency.get(stem) ?? 0) + 1);
  }
  const average = Math.max(length / Math.max(records.length, 1), 1);
  const weightOf = (stem: string) => {
    const documents = frequency.get(stem) ?? 0;
    return Math.max(Math.log((records.length - documents + 0.5) / (documents + 0.5)), 0.1);
  };
  const bm25 = (list: readonly string[]) => {
    let score = 0;
    for (const stem of wanted) {
      let count = 0;
      for (const each of list) if (each === stem) count++;
      if (count === 0) continue;
      score += (weightOf(stem) * count * (k1 + 1)) / (count + k1 * (1 - b + (b * list.length) / average));
    }
    return score;
  };
  const own = new Map<string, number>();
  for (const [id, list] of stems) own.set(id, bm25(list));
  const scores = new Map<string, { score: number; own: boolean }>();
  const add = (id: string | null | undefined, score: number, matched: boolean) => {
    if (id === null || id === undefined || score <= 0 || !stems.has(id)) return;
    const entry = scores.get(id) ?? { score: 0, own: false };
    entry.score += score;
    entry.own ||= matched;
    scores.set(id, entry);
  };
  for (const record of records) {
    const parent = record.parentId === null ? undefined : byId(record.parentId);
    const grandparent = parent?.parentId === null || parent === undefined ? undefined : byId(parent.parentId);
    const context = [parent, grandparent].flatMap((turn) =>
      turn === undefined ? [] : (stems.get(turn.id) ?? []),
    );
    const score = own.get(record.id) ?? 0;
    add(record.id, score + ranking.contextWeight * bm25(context), score > 0);
    add(parent?.id, ranking.afterShare * score, false);
    add(grandparent?.id, ranking.afterShare * ranking.afterShare * score, false);
  }
  return scores;
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
