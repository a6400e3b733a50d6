import { expect } from "vitest";
import { HOSTILE_QUERIES } from "./hostile-queries.js";
import type { SessionStoreUnderTest } from "./session-options.js";
import { type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** `searchMessages`: words of text parts, one session's messages only, hostile queries read as text. */
export function sessionSearchGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  const missing = suite.options.capabilities.search ? null : "search not declared";
  sessionGroup("search", suite, missing, (fixture, test) => {
    const search = async (store: P, query: string, limit = 10) => {
      if (typeof store.searchMessages !== "function")
        throw new Error("search declared but no searchMessages");
      return store.searchMessages(query, limit);
    };

    test("finds a message by a word of its text, with its role and text", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "We deploy on Friday afternoon"));
      await store.appendMessage(textMessage("b", "Lunch is at noon", "assistant"));
      const hits = await search(store, "deploy");
      // A message may also be found through the turns before it on its branch (its search context), but
      // ranks below the one whose own text has the word; the text returned is always the message's own.
      expect(hits.map((hit) => [hit.id, hit.role, hit.content])[0]).toEqual([
        "a",
        "user",
        "We deploy on Friday afternoon",
      ]);
      expect(hits.map((hit) => hit.content)).not.toContain("We deploy on Friday afternoon\nLunch is at noon");
    });

    test("respects the limit, reflects updates and deletes", async () => {
      const store = await fixture.create();
      for (let index = 0; index < 5; index++)
        await store.appendMessage(textMessage(`m${index}`, `zebra ${index}`));
      expect(await search(store, "zebra", 2)).toHaveLength(2);
      await store.updateMessage(textMessage("m0", "giraffe"));
      await store.deleteMessages(["m1"]);
      const ids = (await search(store, "zebra")).map((hit) => hit.id).sort();
      expect(ids).toEqual(["m2", "m3", "m4"]);
      expect((await search(store, "giraffe")).map((hit) => hit.id)).toEqual(["m0"]);
    });

    test("does not return another session's messages", async () => {
      if (!suite.options.session) return;
      const one = await fixture.create();
      const two = await fixture.session(one, "other-session");
      await two.appendMessage(textMessage("x", "secret elephant"));
      expect(await search(one, "elephant")).toEqual([]);
    });

    test("hostile queries are read as text: no error, no injection", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "plain words about a NEAR miss"));
      for (const hostile of HOSTILE_QUERIES) {
        const hits = await search(store, hostile.query);
        expect(Array.isArray(hits), hostile.name).toBe(true);
      }
    });
  });
}
