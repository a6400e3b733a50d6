import type { SessionMessage } from "@contextblocks/sessions";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { indexBatchSize } from "../../src/message-index.js";
import { type SqliteTree, sqliteTree } from "../sqlite-tree.js";

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

/** What a search shows: its hits and the turns beside them (near-matches come back as a hit's context). */
async function found(store: SqliteTree, query: string): Promise<string[]> {
  return (await store.searchMessages(query, 10))
    .flatMap((hit) => [hit.id, ...(hit.context ?? []).map((turn) => turn.id)])
    .sort();
}

describe("SqliteSessionStore search: each message indexed with the turns around it on its branch", () => {
  it("finds the answer through the question before it, on its own branch only", async () => {
    const store = sqliteTree(temporary.database, "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("z", "The zebra exhibit opens Friday."));
    await store.appendMessage(message("z-reply", "Lovely, I will go.", "assistant"));
    // A second branch under "a": its context is q and a, never the sibling branch's zebra turns.
    await store.appendMessage(message("other", "Something else entirely."), "a");
    await store.appendMessage(message("other-reply", "Right.", "assistant"));
    // "other" hangs under "a": its grandparent is the question.
    expect(await found(store, "researching")).toEqual(["a", "other", "q", "z"]);
    // The text returned is the message's own, never its context.
    const shown = await store.searchMessages("researching", 10);
    expect(shown.map((hit) => [hit.id, hit.content, hit.matchedBy])).toEqual([
      ["q", "What are you researching lately?", "text"],
    ]);
    expect(shown[0]?.context?.find((turn) => turn.id === "a")?.text).toBe("Adoption agencies, mostly.");
    // "z" is the first answer to "a": "a" and "q" have it among the turns after them.
    expect(await found(store, "zebra")).toEqual(["a", "q", "z", "z-reply"]);
    // The second branch: its own turns and the one after it find it, and so do the turns it answers ("a",
    // "q": on its path), never the sibling branch's "z" and "z-reply".
    expect(await found(store, "else")).toEqual(["a", "other", "other-reply", "q"]);
  });

  it("an updated message's children and grandchildren are found by its new text, not its old one", async () => {
    const store = sqliteTree(temporary.database, "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    await store.appendMessage(message("c", "Thanks.", "assistant"));
    await store.updateMessage(message("q", "What are you painting lately?"));
    expect(await found(store, "researching")).toEqual([]);
    expect(await found(store, "painting")).toEqual(["a", "b", "q"]);
  });

  it("a deleted message is gone from its children's context too", async () => {
    const store = sqliteTree(temporary.database, "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    await store.deleteMessages(["q"]);
    expect(await found(store, "researching")).toEqual([]);
    expect(await found(store, "adoption")).toEqual(["a", "b"]);
  });

  it("turns under a compaction overlay stay searchable", async () => {
    const store = sqliteTree(temporary.database, "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    await store.addCompaction("They talked about work.", "q", "a");
    expect(await found(store, "researching")).toEqual(["a", "b", "q"]);
    expect(await found(store, "agencies")).toEqual(["a", "b", "q"]);
  });

  it("the lazy index writes the context too, across its batches", async () => {
    const store = sqliteTree(temporary.database, "chat");
    // The question is the last message of the first batch; its answer is indexed by the next one.
    for (let index = 0; index < indexBatchSize - 1; index++) {
      await store.appendMessage(message(`filler-${index}`, `filler turn ${index}`));
    }
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    // The two turns before the question were indexed by the first batch; they gain it as a turn after them.
    expect(await found(store, "researching")).toEqual(["a", "b", "filler-197", "filler-198", "q"]);
    // The question, in the first batch, gains its answer (from the second batch) as the turn after it.
    expect(await found(store, "agencies")).toEqual(["a", "b", "filler-198", "q"]);
  }, 30_000);

  it("an update before the next search is indexed by it, with its context", async () => {
    const store = sqliteTree(temporary.database, "chat");
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    await store.updateMessage(message("a", "Orchard soil, mostly.", "assistant"));
    await store.appendMessage(message("b", "Good luck."));
    expect(await found(store, "researching")).toEqual(["a", "b", "q"]);
    expect(await found(store, "orchard")).toEqual(["a", "b", "q"]);
    expect(await found(store, "agencies")).toEqual([]);
  });

  it("indexOnAppend writes each row with its context at append", async () => {
    const store = sqliteTree(temporary.database, { sessionId: "chat", indexOnAppend: true });
    await store.appendMessage(message("q", "What are you researching lately?"));
    await store.appendMessage(message("a", "Adoption agencies, mostly.", "assistant"));
    const context = temporary.database.prepare("SELECT context FROM assistant_fts WHERE id = 'a'").all() as {
      context: string;
    }[];
    expect(context.map((row) => row.context).join(" ")).toContain("researching");
    expect(await found(store, "researching")).toEqual(["a", "q"]);
    // The question's row gained the answer as the turn after it when the answer was appended.
    expect(await found(store, "agencies")).toEqual(["a", "q"]);
  });

  it("an append whose search rows cannot be written is still reported stored, and the next search indexes it", async () => {
    for (const indexOnAppend of [true, false]) {
      const sessionId = `chat-${indexOnAppend}`;
      const store = sqliteTree(temporary.database, { sessionId, indexOnAppend });
      await store.appendMessage(message(`${sessionId}-q`, "Where does the ferry leave from?"));
      // The search index is out of reach: every write of search rows fails from here on.
      temporary.database.exec("ALTER TABLE assistant_fts RENAME TO assistant_fts_away");
      // Enough appends that the bounded catch-up runs (and fails) inside one of them.
      for (let i = 0; i < 10; i++) {
        await store.appendMessage(
          message(`${sessionId}-m${i}`, `The ferry number ${i} leaves from pier seven.`),
        );
      }
      expect((await store.getHistory()).map((stored) => stored.id)).toHaveLength(11);
      // A search that needs the index reports the failure; nothing stored is lost.
      await expect(store.searchMessages("pier", 10)).rejects.toThrow(/assistant_fts/);
      temporary.database.exec("ALTER TABLE assistant_fts_away RENAME TO assistant_fts");
      const hits = await store.searchMessages("pier", 20);
      expect(hits.map((hit) => hit.id).sort()).toEqual(
        Array.from({ length: 10 }, (_, i) => `${sessionId}-m${i}`).sort(),
      );
    }
  });
});
