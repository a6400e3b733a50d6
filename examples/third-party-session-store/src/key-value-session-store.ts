import type { StoredCompaction } from "@contextblocks/sessions";
import type {
  AppendPlacement,
  AppendResult,
  MessageRecord,
  SessionStoreV1,
} from "@contextblocks/sessions/store-kit";
import { type KeyValueNamespace, listKeys } from "./key-value.js";
import { type SingleWriter, writeQueueFor } from "./single-writer.js";

export interface KeyValueSessionStoreOptions {
  /** The database: every session's records live in it, and ids are unique across it. */
  namespace: KeyValueNamespace;
  /** The session this store reads and writes (default `""`). */
  sessionId?: string;
  /** Runs the writes one at a time (default: the namespace's one queue in this process). */
  writer?: SingleWriter;
}

/** A record as stored under `message:<id>`: the record as given, its session and its insertion number. */
type StoredRecord = MessageRecord & { sessionId: string; order: number };

// Ids and session ids are encoded so a ":" in them cannot be read as a separator, and keys stay ASCII.
const encode = encodeURIComponent;
const messageKey = (id: string) => `message:${encode(id)}`;
// Zero-padded so that byte order (the order `list` returns) is insertion order.
const padded = (order: number) => String(order).padStart(15, "0");

/**
 * A session store over a key-value database (Cloudflare KV's four calls), implementing `SessionStoreV1`.
 * Keys: `message:<id>` holds a record; `session:<session>:order:<n>:<id>` lists a session's records in the
 * order they were stored; `session:<session>:overlay:<n>` holds an overlay. Every write runs through one
 * writer per database, so an append's checks and its writes see no other write in between; reads run freely.
 * The optional members (`search`, `readCalibration` / `writeCalibration`) are left out.
 */
export class KeyValueSessionStore implements SessionStoreV1 {
  readonly specificationVersion = "v1";
  readonly sessionId: string;
  readonly namespace: KeyValueNamespace;
  readonly #writer: SingleWriter;
  readonly #prefix: string;

  constructor(options: KeyValueSessionStoreOptions) {
    if (typeof options?.namespace?.list !== "function" || typeof (options.sessionId ?? "") !== "string") {
      throw new TypeError("KeyValueSessionStore: expected { namespace, sessionId?: string }");
    }
    // A lone UTF-16 surrogate has no URI encoding: refused by name here, not as `encodeURIComponent`'s URIError.
    if (/\p{Cs}/u.test(options.sessionId ?? "")) {
      throw new TypeError("KeyValueSessionStore: sessionId holds a lone UTF-16 surrogate");
    }
    this.namespace = options.namespace;
    this.sessionId = options.sessionId ?? "";
    this.#writer = options.writer ?? writeQueueFor(options.namespace);
    this.#prefix = `session:${encode(this.sessionId)}:`;
  }

  async readPath(leafId: string | undefined, options: { limit: number; content: boolean }) {
    let record = leafId === undefined ? latestLeaf(await this.#records()) : await this.#record(leafId);
    const path: StoredRecord[] = [];
    const seen = new Set<string>();
    while (record !== null && path.length < options.limit && !seen.has(record.id)) {
      seen.add(record.id);
      path.push(record);
      record = record.parentId === null ? null : await this.#record(record.parentId);
    }
    return path.reverse().map((stored) => publicRecord(stored, options.content));
  }

  async readMessages(ids: readonly string[]) {
    const found = await Promise.all(ids.map((id) => this.#record(id)));
    return found.filter((record) => record !== null).map((record) => publicRecord(record, true));
  }

  async readChildren(parentId: string) {
    return (await this.#records())
      .filter((record) => record.parentId === parentId)
      .map((record) => publicRecord(record, true));
  }

  async readTree(limit: number) {
    return (await this.#records(limit)).map((record) => publicRecord(record, false));
  }

  append(records: readonly MessageRecord[], placement: AppendPlacement): Promise<AppendResult> {
    return this.#writer.run(async () => {
      const stored = await this.#records();
      const leafId = latestLeaf(stored)?.id ?? null;
      if (placement.expectedLeafId !== undefined && placement.expectedLeafId !== leafId) {
        return { status: "stale-leaf", leafId };
      }
      const parentId = placement.parentId === undefined ? leafId : placement.parentId;
      if (parentId !== null && !stored.some((record) => record.id === parentId)) {
        return { status: "parent-missing", parentId };
      }
      const parents = new Set(stored.map((record) => record.parentId));
      const holders = await Promise.all(records.map((record) => this.#anySession(record.id)));
      for (const [index, record] of records.entries()) {
        const holder = holders[index];
        if (holder) {
          const { order: _order, text: _text, ...held } = holder;
          return { status: "id-taken", index, holder: { ...held, content: held.content ?? "" } };
        }
        if (parents.has(record.id)) return { status: "still-a-parent", index };
      }
      // Numbered after the session's newest record, so the listing's byte order is storage order.
      const first = (stored.at(-1)?.order ?? -1) + 1;
      const chain = records.map((record, index) => ({
        ...record,
        parentId: index === 0 ? parentId : (records[index - 1]?.id ?? null),
        sessionId: this.sessionId,
        order: first + index,
      }));
      // Each record's own key first, then the entry that lists it in the session.
      await Promise.all(chain.map((record) => this.#write(record)));
      await Promise.all(chain.map((record) => this.namespace.put(this.#orderKey(record), "")));
      return { status: "appended", parentId };
    });
  }

  update(record: MessageRecord): Promise<boolean> {
    return this.#writer.run(async () => {
      const stored = await this.#record(record.id);
      if (stored === null) return false;
      // The parent, time and place in the session stay; the rest is replaced as given.
      const { parentId, createdAt, sessionId, order } = stored;
      await this.#write({ ...record, parentId, createdAt, sessionId, order });
      return true;
    });
  }

  delete(ids: readonly string[]): Promise<void> {
    return this.#writer.run(async () => {
      for (const id of ids) {
        const stored = await this.#record(id);
        if (stored === null) continue;
        await this.namespace.delete(this.#orderKey(stored));
        await this.namespace.delete(messageKey(id));
      }
    });
  }

  clear(): Promise<void> {
    return this.#writer.run(async () => {
      for (const record of await this.#records()) await this.namespace.delete(messageKey(record.id));
      for (const key of await listKeys(this.namespace, this.#prefix)) await this.namespace.delete(key);
    });
  }

  addOverlay(overlay: StoredCompaction): Promise<void> {
    return this.#writer.run(async () => {
      // Overlays are only ever added (and cleared together), so their count numbers the next one.
      const count = (await listKeys(this.namespace, `${this.#prefix}overlay:`)).length;
      await this.namespace.put(`${this.#prefix}overlay:${padded(count)}`, JSON.stringify(overlay));
    });
  }

  async readOverlays(): Promise<StoredCompaction[]> {
    const keys = await listKeys(this.namespace, `${this.#prefix}overlay:`);
    const values = await Promise.all(keys.map((key) => this.namespace.get(key)));
    return values.filter((value) => value !== null).map((value) => JSON.parse(value) as StoredCompaction);
  }

  /** The record with this id, in any session. */
  async #anySession(id: string): Promise<StoredRecord | null> {
    const value = await this.namespace.get(messageKey(id));
    return value === null ? null : (JSON.parse(value) as StoredRecord);
  }

  /** The record with this id in this session. */
  async #record(id: string): Promise<StoredRecord | null> {
    const record = await this.#anySession(id);
    return record?.sessionId === this.sessionId ? record : null;
  }

  /** This session's records in the order they were stored (the first `limit`). */
  async #records(limit = Number.POSITIVE_INFINITY): Promise<StoredRecord[]> {
    const keys = (await listKeys(this.namespace, `${this.#prefix}order:`)).slice(0, limit);
    const ids = keys.map((key) => decodeURIComponent(key.slice(key.lastIndexOf(":") + 1)));
    const records = await Promise.all(ids.map((id) => this.#record(id)));
    return records.filter((record) => record !== null);
  }

  #write(record: StoredRecord): Promise<void> {
    return this.namespace.put(messageKey(record.id), JSON.stringify(record));
  }

  #orderKey(record: StoredRecord): string {
    return `${this.#prefix}order:${padded(record.order)}:${encode(record.id)}`;
  }
}

/** The newest record without a child: where the conversation goes on. */
function latestLeaf(records: readonly StoredRecord[]): StoredRecord | null {
  const parents = new Set(records.map((record) => record.parentId));
  return [...records].reverse().find((record) => !parents.has(record.id)) ?? null;
}

/** A record as the contract returns it: without the session and order kept beside it. */
function publicRecord(stored: StoredRecord, content: boolean): MessageRecord {
  const { sessionId: _session, order: _order, text: _text, ...record } = stored;
  if (!content) delete record.content;
  return record;
}
