import { isContextError } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import { isSessionMessageEvent, Session, type SessionEvent, type SessionMessage } from "../src/index.js";
import { InMemorySessions } from "../src/memory/index.js";
import type { SessionMessageEvent, SessionStore } from "../src/store-kit.js";
import { MemoryTree } from "./memory-tree.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/** The in-memory store counting the messages its content reads return (a real store, not a fake). */
class CountingStore extends MemoryTree {
  contentReads = 0;
  override async getMessages(messageIds: readonly string[]): Promise<SessionMessage[]> {
    const messages = await super.getMessages(messageIds);
    this.contentReads += messages.length;
    return messages;
  }
  override async getHistory(leafId?: string | null): Promise<SessionMessage[]> {
    const messages = await super.getHistory(leafId);
    this.contentReads += messages.length;
    return messages;
  }
}

/** The same real store seen through the required contract only (no optional methods): the generic path. */
function requiredOnly(store: MemoryTree): SessionStore {
  return {
    sessionId: store.sessionId,
    getMessage: (id) => store.getMessage(id),
    getHistory: (leafId) => store.getHistory(leafId),
    getLatestLeaf: () => store.getLatestLeaf(),
    getBranches: (id) => store.getBranches(id),
    getPathLength: (leafId) => store.getPathLength(leafId),
    getNode: (id) => store.getNode(id),
    getTree: (options) => store.getTree(options),
    appendMessage: (value, parentId) => store.appendMessage(value, parentId),
    updateMessage: (value) => store.updateMessage(value),
    deleteMessages: (messageIds) => store.deleteMessages(messageIds),
    clearMessages: () => store.clearMessages(),
    addCompaction: (summary, from, to) => store.addCompaction(summary, from, to),
    getCompactions: () => store.getCompactions(),
  };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const values: T[] = [];
  for await (const value of iterable) values.push(value);
  return values;
}

async function fill(session: Session, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    await session.appendMessage(
      message(`m${index}`, `message number ${index}`, index % 2 ? "assistant" : "user"),
    );
  }
}

describe("Session.historyBatches / history", () => {
  for (const [name, wrap] of [
    ["a store with getPathNodes and getMessages", (store: MemoryTree): SessionStore => store],
    ["the required contract only (getNode walk, getMessage per id)", requiredOnly],
  ] as const) {
    it(`yields the path in bounded batches with overlays applied, as getHistory reads it (${name})`, async () => {
      const store = new MemoryTree();
      const session = new Session({ store: wrap(store) });
      await fill(session, 12);
      await session.appendMessage(message("side", "a branch"), "m3");
      await session.appendMessage(message("m12", "the leaf"), "m11");
      await session.addCompaction("SUMMARY 2..5", "m2", "m5");
      const batches = await collect(session.historyBatches({ batchSize: 4 }));
      expect(batches.every((batch) => batch.length >= 1 && batch.length <= 4)).toBe(true);
      const flat = batches.flat();
      expect(flat).toEqual(await store.getHistory());
      expect(ids(flat)).toEqual([
        "m0",
        "m1",
        "compaction_" + (await store.getCompactions())[0]?.id,
        ...ids(flat).slice(3),
      ]);
      expect(ids(flat).slice(3)).toEqual(["m6", "m7", "m8", "m9", "m10", "m11", "m12"]);
      expect(flat[2]?.parts[0]?.text).toBe("SUMMARY 2..5");
      // Another leaf: the branch.
      expect((await collect(session.historyBatches({ leafId: "side" }))).flat()).toEqual(
        await store.getHistory("side"),
      );
      // The whole path, unbudgeted: not truncated.
      const whole = await session.history();
      expect(whole.truncated).toBe(false);
      expect(whole.messages).toEqual(await store.getHistory());
    });
  }

  it("reads content one batch at a time: stopping after the first batch leaves the rest unread", async () => {
    const store = new CountingStore();
    const session = new Session({ store });
    await fill(session, 40);
    store.contentReads = 0;
    for await (const batch of session.historyBatches({ batchSize: 5 })) {
      expect(ids(batch)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
      break;
    }
    expect(store.contentReads).toBe(5);
  });

  it("newestFirst reads leaf to root, the newest batch's content first; a budget keeps the newest", async () => {
    const store = new CountingStore();
    const session = new Session({ store });
    await fill(session, 30);
    await session.addCompaction("SUMMARY 1..3", "m1", "m3");
    const batches = await collect(session.historyBatches({ batchSize: 4, newestFirst: true }));
    expect(batches.flat()).toEqual((await store.getHistory()).reverse());
    store.contentReads = 0;
    for await (const batch of session.historyBatches({ batchSize: 4, newestFirst: true })) {
      expect(ids(batch)).toEqual(["m29", "m28", "m27", "m26"]);
      break;
    }
    expect(store.contentReads).toBe(4);
    const sizes = (await store.getHistory()).map(
      (entry) => new TextEncoder().encode(JSON.stringify(entry)).length,
    );
    const budget = (sizes.at(-1) ?? 0) + (sizes.at(-2) ?? 0);
    const newest = await session.history({ newestFirst: true, maxBytes: budget });
    expect(newest).toMatchObject({ truncated: true, bytes: budget });
    expect(ids(newest.messages)).toEqual(["m29", "m28"]);
  });

  it("stops between store reads when the signal aborts, with the signal's reason", async () => {
    const session = new Session({ store: new MemoryTree() });
    await fill(session, 10);
    const controller = new AbortController();
    const seen: string[] = [];
    const read = async () => {
      for await (const batch of session.historyBatches({ batchSize: 3, signal: controller.signal })) {
        seen.push(...ids(batch));
        controller.abort(new Error("the client went away"));
      }
    };
    await expect(read()).rejects.toThrow("the client went away");
    expect(seen).toEqual(["m0", "m1", "m2"]);
    await expect(session.history({ signal: AbortSignal.abort() })).rejects.toThrow();
  });

  it("maxBatchBytes bounds a batch; a message larger than it comes alone", async () => {
    const session = new Session({ store: new MemoryTree() });
    await session.appendMessage(message("a", "x".repeat(100)));
    await session.appendMessage(message("b", "y".repeat(5_000)));
    await session.appendMessage(message("c", "z".repeat(100)));
    await session.appendMessage(message("d", "w".repeat(100)));
    const batches = await collect(session.historyBatches({ maxBatchBytes: 1_000 }));
    expect(batches.map(ids)).toEqual([["a"], ["b"], ["c", "d"]]);
  });

  it("history({ maxBytes }) stops at the budget and says truncated; the generator returns the same", async () => {
    const session = new Session({ store: new MemoryTree() });
    await fill(session, 10);
    const whole = await session.history();
    const sizes = whole.messages.map((entry) => new TextEncoder().encode(JSON.stringify(entry)).length);
    const budget = (sizes[0] ?? 0) + (sizes[1] ?? 0) + (sizes[2] ?? 0) + 1;
    const cut = await session.history({ maxBytes: budget });
    expect(cut.truncated).toBe(true);
    expect(ids(cut.messages)).toEqual(["m0", "m1", "m2"]);
    expect(cut.bytes).toBeLessThanOrEqual(budget);
    expect(whole.bytes).toBe(sizes.reduce((sum, size) => sum + size, 0));
    const generator = session.historyBatches({ maxBytes: budget, batchSize: 2 });
    const seen: string[][] = [];
    let next = await generator.next();
    while (next.done !== true) {
      seen.push(ids(next.value));
      next = await generator.next();
    }
    expect(seen).toEqual([["m0", "m1"], ["m2"]]);
    expect(next.value).toEqual({ truncated: true, bytes: cut.bytes });
    expect((await session.history({ maxBytes: 0 })).messages).toEqual([]);
    await expect(session.history({ maxBytes: -1 })).rejects.toThrow(/maxBytes must be a number/);
    await expect(collect(session.historyBatches({ batchSize: 0 }))).rejects.toThrow(/batchSize/);
  });
});

/** Replays the change feed onto another store, in order. */
async function replay(events: readonly SessionMessageEvent[], mirror: MemoryTree): Promise<void> {
  for (const event of events) {
    if (event.type === "message-appended") {
      if (event.createdAt !== null)
        await mirror.importMessage(event.message, event.parentId, event.createdAt);
      else await mirror.appendMessage(event.message, event.parentId);
    } else if (event.type === "message-updated") await mirror.updateMessage(event.message);
    else if (event.type === "messages-deleted") await mirror.deleteMessages(event.messageIds);
    else if (event.type === "messages-cleared") await mirror.clearMessages();
    else
      await mirror.addCompaction(
        event.compaction.summary,
        event.compaction.fromMessageId,
        event.compaction.toMessageId,
      );
  }
}

function feedOf(events: readonly SessionEvent[]): SessionMessageEvent[] {
  return events.filter(isSessionMessageEvent);
}

describe("the change feed", () => {
  it("mirrored into a second in-memory store, reproduces the paths, parents and overlays", async () => {
    const store = new MemoryTree({ sessionId: "chat" });
    const session = new Session({ store });
    const heard: SessionEvent[] = [];
    session.subscribe((event) => heard.push(event));
    await session.appendMessage(message("u1", "hello"));
    await session.appendMessages([message("a1", "hi", "assistant"), message("u2", "more")]);
    await session.appendMessage(message("a2", "branch answer", "assistant"), "u1");
    await session.upsertMessage(message("u3", "third"), { parentId: "u2" });
    await session.upsertMessage(message("u2", "more, edited"), { parentId: "a2" });
    await session.updateMessage(message("a1", "hi, edited", "assistant"));
    await session.importMessage(message("old", "from elsewhere"), null, {
      createdAt: "2025-01-02T03:04:05.000Z",
    });
    await session.importMessage(message("old2", "its reply", "assistant"), "old", {
      createdAt: 1_700_000_000_000,
    });
    await session.appendMessage(message("gone", "to delete"), "u3");
    await session.deleteMessages(["gone"]);
    await session.addCompaction("SUMMARY", "a1", "u2");
    await session.appendMessage(message("u4", "after"), "u3");

    const feed = feedOf(heard);
    expect(feed.map((event) => event.type)).toEqual([
      "message-appended",
      "message-appended",
      "message-appended",
      "message-appended",
      "message-appended",
      "message-updated",
      "message-updated",
      "message-appended",
      "message-appended",
      "message-appended",
      "messages-deleted",
      "compaction-added",
      "message-appended",
    ]);
    expect(feed[3]).toMatchObject({
      type: "message-appended",
      messageId: "a2",
      parentId: "u1",
      role: "assistant",
      imported: false,
    });
    expect(feed[2]).toMatchObject({ messageId: "u2", parentId: "a1" });
    expect(feed[10]).toEqual({ type: "messages-deleted", sessionId: "chat", messageIds: ["gone"] });

    const mirror = new MemoryTree({ sessionId: "chat", sessions: new InMemorySessions() });
    await replay(feed, mirror);
    // Overlay ids are the mirror's own: summaries compare by their text.
    const comparable = (messages: SessionMessage[]) =>
      messages.map((entry) =>
        entry.id.startsWith("compaction_") ? { summary: entry.parts[0]?.text } : entry,
      );
    for (const leaf of [undefined, "a2", "old2", "u4"]) {
      expect(comparable(await mirror.getHistory(leaf))).toEqual(comparable(await store.getHistory(leaf)));
    }
    const shape = (
      nodes: { id: string; parentId: string | null; role: string; createdAt: string | null }[],
    ) => nodes.map(({ id, parentId, role, createdAt }) => ({ id, parentId, role, createdAt }));
    expect(shape(await mirror.getTree())).toEqual(shape(await store.getTree()));
    expect((await mirror.getHistory()).find((entry) => entry.parts[0]?.text === "SUMMARY")).toBeDefined();

    await session.clearMessages();
    await replay(feedOf(heard).slice(feed.length), mirror);
    expect(await mirror.getTree()).toEqual([]);
  });

  it("never emits for a failed write", async () => {
    const session = new Session({ store: new MemoryTree() });
    await session.appendMessage(message("a", "one"));
    const heard: SessionEvent[] = [];
    session.subscribe((event) => heard.push(event));
    await expect(session.appendMessage(message("a", "again"))).rejects.toSatisfy(isContextError);
    await expect(session.appendMessage(message("b", "two"), "missing")).rejects.toSatisfy(isContextError);
    await expect(session.updateMessage(message("nope", "x"))).rejects.toSatisfy(isContextError);
    await expect(session.importMessage(message("a", "x"), null, { createdAt: 0 })).rejects.toSatisfy(
      isContextError,
    );
    await expect(session.addCompaction(42 as never, "a", "a")).rejects.toSatisfy(isContextError);
    await expect(session.deleteMessages("a" as never)).rejects.toSatisfy(isContextError);
    expect(heard).toEqual([]);
  });
});

describe("upsertMessage / importMessage", () => {
  it("upsert appends a new id and replaces a stored one's content without moving it", async () => {
    const store = new MemoryTree();
    const session = new Session({ store });
    expect(await session.upsertMessage(message("q", "question"))).toEqual({ inserted: true });
    expect(await session.upsertMessage(message("a", "answer", "assistant"))).toEqual({ inserted: true });
    expect(await session.upsertMessage(message("b", "other answer", "assistant"), { parentId: "q" })).toEqual(
      {
        inserted: true,
      },
    );
    expect(
      await session.upsertMessage(message("a", "answer, streamed", "assistant"), { parentId: null }),
    ).toEqual({
      inserted: false,
    });
    expect((await store.getNode("a"))?.parentId).toBe("q");
    expect((await store.getMessage("a"))?.parts[0]?.text).toBe("answer, streamed");
    expect(await store.getPathLength("a")).toBe(2);
    // A client-written upsert is made safe as an append would be.
    await session.upsertMessage(
      {
        id: "c",
        role: "user",
        parts: [
          { type: "data-run-message", text: "x" },
          { type: "text", text: "hi" },
        ],
      },
      { source: "client", parentId: "b" },
    );
    expect((await store.getMessage("c"))?.parts.map((part) => part.type)).toEqual(["text"]);
    await expect(session.upsertMessage(message("s", "sys", "system"), { source: "client" })).rejects.toThrow(
      /client-written message must have role/,
    );
  });

  it("two upserts of one new id at once store it once", async () => {
    const session = new Session({ store: requiredOnly(new MemoryTree()) });
    await session.appendMessage(message("root", "r"));
    const results = await Promise.all([
      session.upsertMessage(message("x", "first")),
      session.upsertMessage(message("x", "second")),
    ]);
    expect(results.map((result) => result.inserted).sort()).toEqual([false, true]);
    expect(await session.store.getPathLength()).toBe(2);
  });

  for (const [name, wrap] of [
    ["a store with importMessage", (store: MemoryTree): SessionStore => store],
    ["a store without it (append fallback)", requiredOnly],
  ] as const) {
    it(`import keeps id, parent and time, and keeps the trust rules (${name})`, async () => {
      const store = new MemoryTree();
      const session = new Session({ store: wrap(store) });
      const when = new Date("2024-05-06T07:08:09.000Z");
      await session.importMessage(message("x1", "first"), null, { createdAt: when });
      await session.importMessage(message("x2", "second", "assistant"), "x1", {
        createdAt: "2024-05-06T07:09:00Z",
      });
      await session.importMessage(message("x3", "third"), "x2", { createdAt: when.getTime() + 120_000 });
      expect(ids(await session.getHistory())).toEqual(["x1", "x2", "x3"]);
      expect((await session.store.getMessage("x2"))?.createdAt).toBe("2024-05-06T07:09:00.000Z");
      if (wrap === requiredOnly) expect((await store.getNode("x1"))?.createdAt).not.toBe(when.toISOString());
      else expect((await store.getNode("x1"))?.createdAt).toBe(when.toISOString());
      // Refusals: client source, a parent not stored, an id stored, a time that is not one.
      await expect(
        session.importMessage(message("y", "y"), "x3", { createdAt: when, source: "client" }),
      ).rejects.toThrow(/server-side only/);
      await expect(session.importMessage(message("y", "y"), "nope", { createdAt: when })).rejects.toThrow(
        /nope/,
      );
      await expect(session.importMessage(message("x1", "y"), "x3", { createdAt: when })).rejects.toThrow(
        /already exists/,
      );
      await expect(session.importMessage(message("y", "y"), "x3", { createdAt: "soon" })).rejects.toThrow(
        /createdAt/,
      );
      await expect(
        session.importMessage(message("y", "y"), undefined as never, { createdAt: when }),
      ).rejects.toThrow(/parentId/);
      // A parent cycle: x2 deleted while x3 still points at it; importing x2 under x3 is refused.
      await session.deleteMessages(["x2"]);
      await expect(session.importMessage(message("x2", "back"), "x3", { createdAt: when })).rejects.toThrow(
        /still the parent/,
      );
      expect(ids(await session.getHistory("x3"))).toEqual(["x3"]);
    });
  }
});
