import { expect } from "vitest";
import type { SessionStoreUnderTest } from "./session-options.js";
import { idsOf, type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** Compaction overlays: stored by range, applied on read, never changing the stored messages. */
export function sessionOverlaysGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  sessionGroup("overlays", suite, null, (fixture, test) => {
    test("an overlay replaces its range with one message holding the summary; the messages stay stored", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b", "c", "d"]) await store.appendMessage(textMessage(id, `text ${id}`));
      await store.addCompaction("SUMMARY OF B AND C", "b", "c");
      const history = await store.getHistory();
      expect(history).toHaveLength(3);
      expect(history[0]?.id).toBe("a");
      expect(history[1]?.parts.map((part) => part.text)).toEqual(["SUMMARY OF B AND C"]);
      expect(history[2]?.id).toBe("d");
      expect((await store.getMessage("b"))?.parts[0]?.text).toBe("text b");
      expect(await store.getPathLength()).toBe(4);
      expect(
        (await store.getCompactions()).map((overlay) => [overlay.fromMessageId, overlay.toMessageId]),
      ).toEqual([["b", "c"]]);
    });

    test("an overlay whose range is not on the path read does not apply", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("q", "question"));
      await store.appendMessage(textMessage("a1", "one", "assistant"));
      await store.appendMessage(textMessage("a2", "two", "assistant"), "q");
      await store.addCompaction("about a1", "a1", "a1");
      expect(idsOf(await store.getHistory("a2"))).toEqual(["q", "a2"]);
    });
  });
}
