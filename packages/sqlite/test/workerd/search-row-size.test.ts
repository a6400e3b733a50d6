import { describe, expect, it } from "vitest";
import { sqliteTree } from "../sqlite-tree.js";
import { inObject } from "./in-object.js";

/**
 * A search row holds a message's text and, as context, the text of the two turns before it. Three turns in a
 * row of 256K characters of CJK text (786 KB of UTF-8 each, every message well under a row) once made a row of
 * 2.4 MB, which a Durable Object refuses with a bare SQLITE_TOOBIG: the keyed layout refused the append, and on
 * the lean layout every later search of the database failed on its catch-up.
 */
const large = (word: string) => `${word} ${"漢".repeat(256 * 1024)}`;
const say = (id: string, text: string) => ({
  id,
  role: "user" as const,
  parts: [{ type: "text" as const, text }],
});

describe.each(["keyed", "lean"] as const)("search rows of large turns on a Durable Object (%s)", (layout) => {
  it("three large turns in a row are stored, indexed and found", async () => {
    await inObject(`search-row-size-${layout}`, async (state) => {
      // The longest session id a store writes (60,000 bytes), held three times by each search row.
      const sessionId = "漢".repeat(20_000);
      const store = sqliteTree(state.storage, { sessionId, newDatabaseLayout: layout });
      for (const word of ["alpha", "bravo", "charlie", "delta"])
        await store.appendMessage(say(word, large(word)));
      expect((await store.getHistory()).map((message) => message.id)).toEqual([
        "alpha",
        "bravo",
        "charlie",
        "delta",
      ]);
      for (const word of ["alpha", "charlie", "delta"]) {
        expect((await store.searchMessages(word, 1)).map((hit) => hit.id)).toEqual([word]);
      }
    });
  });
});
