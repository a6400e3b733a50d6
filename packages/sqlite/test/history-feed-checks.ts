import {
  isSessionMessageEvent,
  type Session,
  type SessionMessage,
  type SessionMessageEvent,
} from "@contextblocks/sessions";
import { InMemorySessionStore } from "@contextblocks/sessions/memory";
import { expect } from "vitest";

// Streamed history reads, the change feed, upsertMessage and importMessage through a `Session` on a SQLite
// store: the store has none of the optional path methods, so these are the generic fallbacks (a `getNode`
// walk, `getMessage` per id, `appendMessage` for an import). Shared by the better-sqlite3 and workerd tests.

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

/** Overlay ids are each store's own: summaries compare by their text. */
const comparable = (messages: readonly SessionMessage[]) =>
  messages.map((entry) => (entry.id.startsWith("compaction_") ? { summary: entry.parts[0]?.text } : entry));

export async function checkHistoryAndFeed(session: Session, largeBytes: number): Promise<void> {
  const feed: SessionMessageEvent[] = [];
  session.subscribe((event) => {
    if (isSessionMessageEvent(event)) feed.push(event);
  });
  await session.appendMessage(message("q", "question"));
  await session.appendMessages([message("a1", "answer", "assistant"), message("u2", "more")]);
  await session.appendMessage(message("big", "x".repeat(largeBytes), "assistant"));
  await session.appendMessage(message("b1", "a branch", "assistant"), "q");
  await session.upsertMessage(message("u3", "after the big one"), { parentId: "big" });
  expect(await session.upsertMessage(message("u2", "more, edited"), { parentId: null })).toEqual({
    inserted: false,
  });
  await session.addCompaction("SUMMARY a1..u2", "a1", "u2");
  await session.importMessage(message("old", "from elsewhere"), null, { createdAt: "2024-01-02T03:04:05Z" });
  await session.appendMessage(message("gone", "to delete"), "u3");
  await session.deleteMessages(["gone"]);
  await expect(session.appendMessage(message("q", "again"))).rejects.toThrow();

  // Batched reads over the generic path equal getHistory, overlays applied; the big message comes alone.
  const history = await session.getHistory("u3");
  const batches: SessionMessage[][] = [];
  for await (const batch of session.historyBatches({ leafId: "u3", batchSize: 2, maxBatchBytes: 1_000 })) {
    batches.push(batch);
  }
  expect(batches.flat()).toEqual(history);
  expect(batches.find((batch) => batch.some((entry) => entry.id === "big"))?.length).toBe(1);
  expect(ids(history)).toEqual(["q", ids(history)[1], "big", "u3"]);
  expect(history[1]?.parts[0]?.text).toBe("SUMMARY a1..u2");
  expect((await session.getMessage("u2"))?.parts[0]?.text).toBe("more, edited");

  // A budget below the big message stops before it and says so.
  const cut = await session.history({ leafId: "u3", maxBytes: largeBytes / 2 });
  expect(cut.truncated).toBe(true);
  expect(ids(cut.messages)).toEqual(ids(history).slice(0, 2));
  const whole = await session.history({ leafId: "u3" });
  expect(whole.truncated).toBe(false);
  expect(whole.messages).toEqual(history);

  // The import kept its id, parent and time (on the message: the store has no importMessage).
  expect((await session.getMessage("old"))?.createdAt).toBe("2024-01-02T03:04:05.000Z");
  await expect(session.importMessage(message("u2", "back"), "u3", { createdAt: 0 })).rejects.toThrow();

  // The feed mirrored into an in-memory store reproduces every path.
  const mirror = new InMemorySessionStore({ sessionId: session.id });
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
  for (const leaf of ["u3", "b1", "old", undefined]) {
    expect(comparable(await mirror.getHistory(leaf))).toEqual(comparable(await session.getHistory(leaf)));
  }
}
