import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { SessionMessage } from "./message.js";
import { applyCompactions } from "./overlays.js";
import type { MessageNode, SessionStore } from "./session-store.js";
import { maximumPathLength, serializeMessage } from "./stored-message.js";

/**
 * Streamed and byte-budgeted reads of a path (`Session.historyBatches`, `Session.history`), written once
 * over the `SessionStore` contract, as `history()` / `historyBatches()` of Cloudflare agents' Sessions API
 * (`agents/sessions`, agents@0.32.0) read one bounded window at a time. A store with `getPathMessages`
 * (SQLite, Postgres) is read once, about one row per message, bounded by the byte budget where overlays
 * allow. Otherwise the path is read without content
 * first (`getPathNodes`, or a `getNode` walk from the leaf), overlays are planned on it as `getHistory`
 * applies them, and content is read one batch at a time (`getMessages`, or `getMessage` per id): peak memory
 * is one batch, and a reader that stops early never reads the rest.
 */

/** Options of `Session.historyBatches`. */
export interface HistoryBatchOptions {
  /** Read the path to this message (default: the latest leaf). */
  leafId?: string | null | undefined;
  /** Most messages per batch (and per store read). Default 50. */
  batchSize?: number | undefined;
  /**
   * Most serialized bytes (UTF-8 JSON of the message, as stored) per batch. Default 4 MiB. A message larger
   * than this is yielded alone.
   */
  maxBatchBytes?: number | undefined;
  /** Stop once the messages yielded would pass this many bytes in all (default: no limit). */
  maxBytes?: number | undefined;
  /** Leaf to root instead: content is still read one batch at a time, newest batch first. */
  newestFirst?: boolean | undefined;
  /** Stops the read between store reads (the signal's reason is thrown). */
  signal?: AbortSignal | undefined;
}

/** Options of `Session.history`. */
export interface HistoryOptions {
  leafId?: string | null | undefined;
  /** Stop before the first message that would pass this many bytes in all (default: no limit). */
  maxBytes?: number | undefined;
  /** Messages per store read. Default 50. */
  batchSize?: number | undefined;
  /** Leaf to root: the newest messages that fit the budget, newest first. */
  newestFirst?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** What `Session.history` returns. */
export interface HistoryResult {
  /**
   * Root-to-leaf order (leaf to root with `newestFirst`), overlays applied: the whole path, or its oldest
   * part (newest with `newestFirst`) when `truncated`.
   */
  messages: SessionMessage[];
  /** True when the byte budget stopped the read before the leaf. */
  truncated: boolean;
  /** Serialized bytes of `messages`. */
  bytes: number;
}

const defaultBatchSize = 50;
const defaultMaxBatchBytes = 4 * 1024 * 1024;

/** The message's serialized size in UTF-8 bytes (what a store keeps). */
export function messageBytes(message: SessionMessage): number {
  return new TextEncoder().encode(serializeMessage(message)).length;
}

/**
 * The path root..leaf without content. `store.getPathNodes` when the store has it; otherwise a walk of
 * `getNode` from the leaf (one small read per message, never a content read), bounded by
 * `maximumPathLength`: a longer path (or a parent loop) fails with `INVALID_INPUT` as `getHistory` does.
 */
export async function readPathNodes(
  store: SessionStore,
  leafId: string | null | undefined,
): Promise<MessageNode[]> {
  if (typeof store.getPathNodes === "function") return store.getPathNodes(leafId);
  const leaf =
    leafId === undefined || leafId === null
      ? (await store.getLatestLeaf())?.id
      : await store.getNode(leafId).then((node) => node?.id);
  const path: MessageNode[] = [];
  const seen = new Set<string>();
  for (let id = leaf ?? null; id !== null; ) {
    if (seen.has(id) || path.length >= maximumPathLength) {
      throw new ContextError(
        "INVALID_INPUT",
        `history: the path to "${path[0]?.id}" is longer than ${maximumPathLength} messages (or its parent links loop)`,
      );
    }
    seen.add(id);
    const node = await store.getNode(id);
    if (node === null) break;
    path.push(node);
    id = node.parentId;
  }
  return path.reverse();
}

/** Messages by id, in the order asked (`store.getMessages`, or `getMessage` per id); missing ones skipped. */
async function readMessages(store: SessionStore, ids: readonly string[]): Promise<SessionMessage[]> {
  if (ids.length === 0) return [];
  if (typeof store.getMessages === "function") return store.getMessages(ids);
  const messages: SessionMessage[] = [];
  for (const id of ids) {
    const message = await store.getMessage(id);
    if (message !== null) messages.push(message);
  }
  return messages;
}

/**
 * The path root..leaf with overlays applied, one store read of at most `batchSize` messages at a time.
 * Overlay summaries are yielded in their place without a read. A store with `getPathMessages` is read once
 * instead (about one row per message rather than two), bounded by `maxBytes` when no overlay could change
 * the sizes along the path.
 */
async function* streamPath(
  store: SessionStore,
  leafId: string | null | undefined,
  batchSize: number,
  newestFirst: boolean,
  maxBytes: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<SessionMessage, void, undefined> {
  signal?.throwIfAborted();
  if (typeof store.getPathMessages === "function") {
    const compactions = await store.getCompactions();
    // The store may stop one message past the budget (root first, or leaf first with `newestFirst`); with
    // overlays (a summary's size is not its range's) the whole path is read.
    const bounded = compactions.length === 0 && Number.isFinite(maxBytes);
    const { messages } = await store.getPathMessages(leafId, bounded ? { maxBytes, newestFirst } : undefined);
    signal?.throwIfAborted();
    const inOrder = applyCompactions(messages, compactions);
    yield* newestFirst ? inOrder.reverse() : inOrder;
    return;
  }
  const nodes = await readPathNodes(store, leafId);
  if (nodes.length === 0) return;
  // Plan the overlays on content-free stand-ins: `applyCompactions` keeps a stored message as the same
  // object and puts a summary message in place of a range, so the plan is exactly what `getHistory` reads.
  const standIns = nodes.map((node): SessionMessage => ({ id: node.id, role: node.role, parts: [] }));
  const inOrder = applyCompactions(standIns, await store.getCompactions());
  const planned = newestFirst ? inOrder.reverse() : inOrder;
  const stored = new Set<SessionMessage>(standIns);
  for (let start = 0; start < planned.length; ) {
    signal?.throwIfAborted();
    const ids: string[] = [];
    let end = start;
    while (end < planned.length && ids.length < batchSize) {
      const entry = planned[end] as SessionMessage;
      if (stored.has(entry)) ids.push(entry.id);
      end++;
    }
    const read = new Map((await readMessages(store, ids)).map((message) => [message.id, message]));
    for (let index = start; index < end; index++) {
      const entry = planned[index] as SessionMessage;
      if (!stored.has(entry)) {
        yield entry;
        continue;
      }
      const message = read.get(entry.id);
      // Deleted since the path was read: skipped, as a path read that ran later would.
      if (message !== undefined) yield message;
    }
    start = end;
  }
}

/** Batches of the path (see `Session.historyBatches`); the last value says whether `maxBytes` stopped it. */
export async function* readHistoryBatches(
  store: SessionStore,
  options: HistoryBatchOptions = {},
): AsyncGenerator<SessionMessage[], { truncated: boolean; bytes: number }, undefined> {
  if (typeof options !== "object" || options === null) {
    throw new ContextError(
      "INVALID_INPUT",
      `historyBatches: expected options { leafId?, batchSize?, maxBatchBytes?, maxBytes? }, got ${describeValue(options)}`,
    );
  }
  const batchSize = positiveWhole(options.batchSize, defaultBatchSize, "batchSize");
  const maxBatchBytes = positiveWhole(options.maxBatchBytes, defaultMaxBatchBytes, "maxBatchBytes");
  const maxBytes = budget(options.maxBytes);
  let batch: SessionMessage[] = [];
  let batchBytes = 0;
  let total = 0;
  const newestFirst = options.newestFirst === true;
  for await (const message of streamPath(
    store,
    options.leafId,
    batchSize,
    newestFirst,
    maxBytes,
    options.signal,
  )) {
    const bytes = messageBytes(message);
    if (total + bytes > maxBytes) {
      if (batch.length > 0) yield batch;
      return { truncated: true, bytes: total };
    }
    if (batch.length > 0 && batchBytes + bytes > maxBatchBytes) {
      yield batch;
      batch = [];
      batchBytes = 0;
    }
    batch.push(message);
    batchBytes += bytes;
    total += bytes;
    // A full batch goes out now, before the next store read.
    if (batch.length >= batchSize || batchBytes >= maxBatchBytes) {
      yield batch;
      batch = [];
      batchBytes = 0;
    }
  }
  if (batch.length > 0) yield batch;
  return { truncated: false, bytes: total };
}

/** The path up to a byte budget (see `Session.history`). */
export async function readHistory(store: SessionStore, options: HistoryOptions = {}): Promise<HistoryResult> {
  if (typeof options !== "object" || options === null) {
    throw new ContextError(
      "INVALID_INPUT",
      `history: expected options { leafId?, maxBytes?, batchSize? }, got ${describeValue(options)}`,
    );
  }
  if (options.maxBytes === undefined) {
    // No budget: the whole path is the result, so it is read as `getHistory` reads it, through the store's
    // own path read (on SQLite's lean layout about one row per message, one statement on Postgres) rather
    // than a node walk and a content read per batch (about two).
    positiveWhole(options.batchSize, defaultBatchSize, "batchSize");
    options.signal?.throwIfAborted();
    const messages = await store.getHistory(options.leafId);
    options.signal?.throwIfAborted();
    if (options.newestFirst === true) messages.reverse();
    let bytes = 0;
    for (const message of messages) bytes += messageBytes(message);
    return { messages, truncated: false, bytes };
  }
  const batches = readHistoryBatches(store, {
    leafId: options.leafId,
    maxBytes: options.maxBytes,
    batchSize: options.batchSize,
    maxBatchBytes: Number.MAX_SAFE_INTEGER,
    newestFirst: options.newestFirst,
    signal: options.signal,
  });
  const messages: SessionMessage[] = [];
  for (;;) {
    const next = await batches.next();
    if (next.done === true) return { messages, truncated: next.value.truncated, bytes: next.value.bytes };
    messages.push(...next.value);
  }
}

function positiveWhole(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1) {
    throw new ContextError(
      "INVALID_INPUT",
      `historyBatches: ${name} must be a number ≥ 1, got ${describeValue(value)}`,
    );
  }
  return Math.floor(value);
}

function budget(value: number | undefined): number {
  if (value === undefined) return Number.POSITIVE_INFINITY;
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `history: maxBytes must be a number ≥ 0, got ${describeValue(value)}`,
    );
  }
  return value;
}
