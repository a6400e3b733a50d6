import { expect } from "vitest";
import type { ConformanceMessage, SessionStoreUnderTest } from "./session-options.js";

/**
 * A `Session` of `@contextblocks/sessions` as `checkSessionHistoryAndFeed` uses it, declared structurally
 * (the suite depends on no storage package): streamed reads, the change feed, `upsertMessage` and
 * `importMessage`, as in Cloudflare agents' Sessions API (`agents/sessions`).
 */
export interface SessionUnderTest {
  readonly id: string;
  appendMessage(message: ConformanceMessage, parentId?: string | null): Promise<void>;
  appendMessages(messages: readonly ConformanceMessage[], parentId?: string | null): Promise<void>;
  upsertMessage(
    message: ConformanceMessage,
    options?: { parentId?: string | null },
  ): Promise<{ inserted: boolean }>;
  importMessage(
    message: ConformanceMessage,
    parentId: string | null,
    options: { createdAt: Date | string | number },
  ): Promise<void>;
  deleteMessages(messageIds: readonly string[]): Promise<void>;
  addCompaction(summary: string, fromMessageId: string, toMessageId: string): Promise<unknown>;
  readonly store: { getMessage(id: string): Promise<(ConformanceMessage & { createdAt?: unknown }) | null> };
  getHistory(leafId?: string | null): Promise<ConformanceMessage[]>;
  history(options?: {
    leafId?: string | null;
    maxBytes?: number;
    newestFirst?: boolean;
  }): Promise<{ messages: ConformanceMessage[]; truncated: boolean; bytes: number }>;
  historyBatches(options?: {
    leafId?: string | null;
    batchSize?: number;
    maxBatchBytes?: number;
    maxBytes?: number;
  }): AsyncIterable<ConformanceMessage[]>;
  subscribe(listener: (event: { type: string }) => void): () => void;
}

/** The change-feed events the check replays (`SessionMessageEvent` of `@contextblocks/sessions`). */
type FeedEvent =
  | { type: "message-appended"; message: ConformanceMessage; parentId: string | null }
  | { type: "message-updated"; message: ConformanceMessage }
  | { type: "messages-deleted"; messageIds: string[] }
  | { type: "messages-cleared" }
  | { type: "compaction-added"; compaction: { summary: string; fromMessageId: string; toMessageId: string } };

const feedTypes = new Set([
  "message-appended",
  "message-updated",
  "messages-deleted",
  "messages-cleared",
  "compaction-added",
]);

function message(id: string, text: string, role = "user"): ConformanceMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/** Overlay ids are each store's own: summaries compare by their text. */
const comparable = (messages: readonly ConformanceMessage[]) =>
  messages.map((entry) => (entry.id.startsWith("compaction_") ? { summary: entry.parts[0]?.text } : entry));

/**
 * Checks, inside one test (so it runs where the session lives: a Durable Object callback, a Node test), what a
 * host relies on: `historyBatches` and `history` equal `getHistory` with overlays applied, a message of
 * `largeMessageBytes` comes in a batch alone and a budget below it stops the read with `truncated`; an upsert
 * of a stored id keeps its parent; an import keeps its id, parent and time and refuses a parent cycle; a write
 * that fails emits nothing; and the change feed replayed onto `mirror` (an empty store, e.g.
 * `InMemorySessionStore`) reproduces every path. The session must be empty.
 */
export async function checkSessionHistoryAndFeed(
  session: SessionUnderTest,
  options: { mirror: SessionStoreUnderTest; largeMessageBytes?: number },
): Promise<void> {
  const largeBytes = options.largeMessageBytes ?? 300_000;
  const feed: FeedEvent[] = [];
  session.subscribe((event) => {
    if (feedTypes.has(event.type)) feed.push(event as FeedEvent);
  });
  await session.appendMessage(message("q", "question"));
  await session.appendMessages([message("a1", "answer", "assistant"), message("u2", "more")]);
  await session.appendMessage(message("big", "x".repeat(largeBytes), "assistant"));
  // Budgets without overlays (a store may bound its path read by them): the read stops before the first
  // message over the budget, a budget of exactly the prefix's bytes keeps it, leaf first keeps the newest.
  const sizes = new Map<string, number>();
  for (const id of ["q", "a1", "u2", "big"]) {
    sizes.set(id, new TextEncoder().encode(JSON.stringify(await session.store.getMessage(id))).length);
  }
  const prefixBytes = (sizes.get("q") ?? 0) + (sizes.get("a1") ?? 0) + (sizes.get("u2") ?? 0);
  const exact = await session.history({ maxBytes: prefixBytes });
  expect({ ids: ids(exact.messages), truncated: exact.truncated, bytes: exact.bytes }).toEqual({
    ids: ["q", "a1", "u2"],
    truncated: true,
    bytes: prefixBytes,
  });
  const short = await session.history({ maxBytes: prefixBytes - 1 });
  expect({ ids: ids(short.messages), truncated: short.truncated }).toEqual({
    ids: ["q", "a1"],
    truncated: true,
  });
  const newest = await session.history({ maxBytes: (sizes.get("big") ?? 0) + (sizes.get("u2") ?? 0) });
  expect({ ids: ids(newest.messages), truncated: newest.truncated }).toEqual({
    ids: ["q", "a1", "u2"],
    truncated: true,
  });
  const leafFirst = await session.history({
    maxBytes: (sizes.get("big") ?? 0) + (sizes.get("u2") ?? 0),
    newestFirst: true,
  });
  expect({ ids: ids(leafFirst.messages), truncated: leafFirst.truncated }).toEqual({
    ids: ["big", "u2"],
    truncated: true,
  });
  const budgetBatches: string[][] = [];
  for await (const batch of session.historyBatches({ batchSize: 2, maxBytes: prefixBytes + 1 })) {
    budgetBatches.push(ids(batch));
  }
  expect(budgetBatches).toEqual([["q", "a1"], ["u2"]]);
  expect(ids((await session.history({ maxBytes: 0 })).messages)).toEqual([]);

  await session.appendMessage(message("b1", "a branch", "assistant"), "q");
  await session.upsertMessage(message("u3", "after the big one"), { parentId: "big" });
  expect(await session.upsertMessage(message("u2", "more, edited"), { parentId: null })).toEqual({
    inserted: false,
  });
  await session.addCompaction("SUMMARY a1..u2", "a1", "u2");
  await session.importMessage(message("old", "from elsewhere"), null, { createdAt: "2024-01-02T03:04:05Z" });
  await session.appendMessage(message("gone", "to delete"), "u3");
  await session.deleteMessages(["gone"]);
  const heard = feed.length;
  await expect(session.appendMessage(message("q", "again"))).rejects.toThrow();
  await expect(session.appendMessage(message("n", "no parent"), "missing")).rejects.toThrow();
  expect(feed.length).toBe(heard);

  // Batched reads over the generic path equal getHistory, overlays applied; the big message comes alone.
  const history = await session.getHistory("u3");
  const batches: ConformanceMessage[][] = [];
  for await (const batch of session.historyBatches({ leafId: "u3", batchSize: 2, maxBatchBytes: 1_000 })) {
    batches.push(batch);
  }
  expect(batches.flat()).toEqual(history);
  expect(batches.find((batch) => batch.some((entry) => entry.id === "big"))?.length).toBe(1);
  expect(ids(history)).toEqual(["q", ids(history)[1], "big", "u3"]);
  expect(history[1]?.parts[0]?.text).toBe("SUMMARY a1..u2");
  expect((await session.store.getMessage("u2"))?.parts[0]?.text).toBe("more, edited");

  // A budget below the big message stops before it and says so.
  const cut = await session.history({ leafId: "u3", maxBytes: largeBytes / 2 });
  expect(cut.truncated).toBe(true);
  expect(ids(cut.messages)).toEqual(ids(history).slice(0, 2));
  const whole = await session.history({ leafId: "u3" });
  expect(whole.truncated).toBe(false);
  expect(whole.messages).toEqual(history);

  // The import kept its id and time (on the message; a store with importMessage keeps it on the row too).
  expect((await session.store.getMessage("old"))?.createdAt).toBe("2024-01-02T03:04:05.000Z");
  await expect(session.importMessage(message("u2", "back"), "u3", { createdAt: 0 })).rejects.toThrow();

  // The feed mirrored into an in-memory store reproduces every path.
  const mirror = options.mirror;
  for (const event of feed) {
    if (event.type === "message-appended") await mirror.appendMessage(event.message, event.parentId);
    else if (event.type === "message-updated") await mirror.updateMessage(event.message);
    else if (event.type === "messages-deleted") await mirror.deleteMessages(event.messageIds);
    else if (event.type === "messages-cleared") await mirror.clearMessages();
    else {
      const { summary, fromMessageId, toMessageId } = event.compaction;
      await mirror.addCompaction(summary, fromMessageId, toMessageId);
    }
  }
  for (const id of ["q", "a1", "u2", "big", "b1", "u3", "old", "gone"]) {
    expect(await options.mirror.getMessage(id)).toEqual(await session.store.getMessage(id));
  }
  for (const leaf of ["u3", "b1", "old", undefined]) {
    expect(comparable(await mirror.getHistory(leaf))).toEqual(comparable(await session.getHistory(leaf)));
  }

  // A parent cycle: "big" deleted while "u3" still points at it; importing "big" under "u3" is refused.
  await session.deleteMessages(["big"]);
  await expect(session.importMessage(message("big", "back"), "u3", { createdAt: 0 })).rejects.toThrow();
  expect((await session.getHistory("u3")).map((entry) => entry.id)).toEqual(["u3"]);
}
