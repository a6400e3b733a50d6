import { expect } from "vitest";
import { HOSTILE_QUERIES } from "./hostile-queries.js";
import type { ConformanceMessage, SessionStoreUnderTest } from "./session-options.js";
import { type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** An assistant turn that is only a tool call: no text part. */
function toolCall(id: string, type: string): ConformanceMessage {
  const parts = [{ type, toolCallId: `${id}-call`, state: "output-available", input: {}, output: "ok" }];
  return { id, role: "assistant", parts };
}

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

    test("precise hits: on a short chat a one-word search returns the turns that hold it, near-matches as context", async () => {
      const store = await fixture.create();
      // A planted chat: two turns about the tide among small talk, and a tool call with no text at all.
      const turns: [string, string, string][] = [
        ["p1", "user", "Morning! Did you sleep well?"],
        ["p2", "assistant", "I did, thanks. Coffee first."],
        ["p3", "user", "When is low tide at the harbour today?"],
        ["p4", "assistant", "Let me look that up for you."],
        ["p6", "assistant", "It is at 14:20, so the beach walk works after lunch."],
        ["p7", "user", "Great, we will bring the dog."],
        ["p8", "assistant", "Bring water too, it will be warm."],
        ["p9", "user", "Do you know a good lunch place?"],
        ["p10", "assistant", "The fish shack by the pier is good."],
        ["p11", "user", "The tide tables said spring tides this week."],
        ["p12", "assistant", "Then the water comes far up the sand."],
        ["p13", "user", "Noted. Anything else for the walk?"],
        ["p14", "assistant", "Sunscreen and a hat."],
        ["p15", "user", "Thanks, see you later."],
      ];
      for (const [id, role, text] of turns.slice(0, 4))
        await store.appendMessage(textMessage(id, text, role));
      await store.appendMessage(toolCall("p5", "tool-tides"));
      for (const [id, role, text] of turns.slice(4)) await store.appendMessage(textMessage(id, text, role));
      const hits = await search(store, "tide");
      const holds = (text: string) => /\btides?\b/i.test(text);
      expect(
        hits
          .slice(0, 2)
          .map((hit) => hit.id)
          .sort(),
      ).toEqual(["p11", "p3"]);
      expect(hits.map((hit) => hit.id)).not.toContain("p5");
      for (const hit of hits) {
        expect(hit.content.trim().length, hit.id).toBeGreaterThan(0);
        expect(["text", "neighbours"], hit.id).toContain(hit.matchedBy);
        if (hit.matchedBy === "text") expect(holds(hit.content), hit.id).toBe(true);
        if (hit.matchedBy === "neighbours") expect(holds(hit.content), hit.id).toBe(false);
      }
      expect(hits.filter((hit) => holds(hit.content)).length * 2).toBeGreaterThanOrEqual(hits.length);
      // A turn shown as context is never also a hit, and context stays short.
      const ids = new Set(hits.map((hit) => hit.id));
      for (const hit of hits) {
        for (const turn of hit.context ?? []) {
          expect(ids.has(turn.id), turn.id).toBe(false);
          expect(turn.id).not.toBe("p5");
        }
        const characters = (hit.context ?? []).reduce((sum, turn) => sum + turn.text.length, 0);
        expect(characters, hit.id).toBeLessThan(1_000);
      }
    });

    test("a turn that says a thing ranks above one that only asks about it", async () => {
      const store = await fixture.create();
      const turns: [string, string, string][] = [
        ["s0", "user", "Morning! Coffee first."],
        ["s1", "assistant", "Seen a zebra there?"],
        ["s2", "user", "Not yet, sadly."],
        ["s3", "assistant", "Good morning again."],
        ["s4", "user", "I saw a zebra there."],
        ["s5", "assistant", "Nice, any plans for the weekend?"],
      ];
      for (const [id, role, text] of turns) await store.appendMessage(textMessage(id, text, role));
      const hits = await search(store, "zebra");
      const textHits = hits.filter((hit) => hit.matchedBy === "text").map((hit) => hit.id);
      expect(textHits).toEqual(["s4", "s1"]);
    });

    test("a message with no text is never a hit, even between two that match", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("q", "Which marmot burrow did we find?"));
      await store.appendMessage(toolCall("call", "tool-map"));
      await store.appendMessage(textMessage("a", "The marmot burrow by the lake.", "assistant"));
      const hits = await search(store, "marmot burrow");
      expect(hits.map((hit) => hit.id).sort()).toEqual(["a", "q"]);
      expect(hits.every((hit) => hit.matchedBy === "text")).toBe(true);
    });

    test("text in a compatibility form or with invisible characters is found by the plain word, and the reverse; hits keep it as written", async () => {
      const store = await fixture.create();
      // Full-width letters from a CJK input method, a ligature, a soft hyphen and a zero-width space pasted in.
      const written: [string, string][] = [
        ["w", "ｔｉｄｅ tables for ２０２３"],
        ["l", "The ﬁnance report"],
        ["s", "Check the har\u00adbour\u200b schedule"],
        ["p", "plain gravel and granite"],
      ];
      for (const [id, text] of written) await store.appendMessage(textMessage(id, text));
      for (const [query, id] of [
        ["tide", "w"],
        ["2023", "w"],
        ["finance", "l"],
        ["harbour", "s"],
        ["ｇｒａｖｅｌ", "p"],
        ["gra\u00adnite", "p"],
      ] as const) {
        const hits = await search(store, query);
        expect(
          hits.map((hit) => hit.id),
          `search(${JSON.stringify(query)})`,
        ).toContain(id);
        // The text handed back is the message's own, byte for byte.
        const hit = hits.find((found) => found.id === id);
        expect(hit?.content).toBe(written.find(([writtenId]) => writtenId === id)?.[1]);
      }
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
