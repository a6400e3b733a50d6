import { expect } from "vitest";
import type { ConformanceMessage, SessionStoreUnderTest } from "./session-options.js";
import { idsOf, type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** Bytes of the message over a Durable Object's 2 MB row limit that must round-trip. Default 3 MiB. */
export const DEFAULT_OVERSIZE_MESSAGE_BYTES = 3 * 1024 * 1024;

/**
 * Hostile writes a store meets in production: a tool output or screenshot over the 2 MB row limit of
 * Durable Object SQLite, two instances (a second store, a new session object per request) appending to
 * one session at once, an id deleted and appended again, a deleted latest leaf, reads and deletes of an id
 * with a lone surrogate (no store holds one), bad `addCompaction`
 * arguments (a summary with a lone surrogate among them, a range whose ends are not the session's messages), and a client message dressed as a compaction summary (a retried append: `session-stored-ids.ts`).
 */
export function sessionHostileGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  const bytes = suite.options.oversizeMessageBytes ?? DEFAULT_OVERSIZE_MESSAGE_BYTES;
  sessionGroup("hostile writes", suite, null, (fixture, test) => {
    test(`a message of ${bytes} bytes (over the 2 MB row limit) reads back byte-identical`, async () => {
      const store = await fixture.create();
      const unit = 'tool output: ä ø 漢字 😀 "quoted" \\ \n';
      const output = unit.repeat(Math.ceil(bytes / new TextEncoder().encode(unit).length));
      const big = {
        id: "big",
        role: "assistant",
        parts: [
          { type: "text", text: "read the file" },
          { type: "tool-readFile", toolCallId: "c1", state: "output-available", output },
        ],
      } as unknown as ConformanceMessage;
      await store.appendMessage(textMessage("q", "read it"));
      await store.appendMessage(big);
      await store.appendMessage(textMessage("a", "done", "assistant"));
      expect(JSON.stringify(await store.getMessage("big"))).toBe(JSON.stringify(big));
      const history = await store.getHistory();
      expect(idsOf(history)).toEqual(["q", "big", "a"]);
      expect(JSON.stringify(history[1])).toBe(JSON.stringify(big));
    });

    test("a deleted id appended again never makes a parent cycle", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b", "c"]) await store.appendMessage(textMessage(id, `text ${id}`));
      await store.deleteMessages(["b"]);
      // Refusing is allowed; storing it must not put it under its own former child.
      await Promise.resolve(store.appendMessage(textMessage("b", "again"))).catch(() => undefined);
      const history = await store.getHistory();
      const ids = idsOf(history);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeLessThanOrEqual(3);
      expect(await store.getPathLength()).toBe(ids.length);
      if (store.getTree) {
        // Every walk up the stored parent links ends: no message is its own ancestor.
        const parents = new Map((await store.getTree()).map((node) => [node.id, node.parentId]));
        for (const start of parents.keys()) {
          const seen = new Set<string>();
          for (
            let at: string | null | undefined = start;
            at != null && parents.has(at);
            at = parents.get(at)
          ) {
            expect(seen.has(at), `a parent cycle through "${at}"`).toBe(false);
            seen.add(at);
          }
        }
      }
    });

    test("two instances on one session appending at once never fork the path", async () => {
      if (!suite.options.session) return;
      // Two live instances on one store and one session (neither a restart of the other).
      const store = await fixture.create();
      const first = await fixture.session(store, "twin");
      const second = await fixture.session(store, "twin");
      const write = async (store: P, prefix: string) => {
        for (let index = 0; index < 8; index++)
          await store.appendMessage(textMessage(`${prefix}${index}`, "hi"));
      };
      await Promise.all([write(first, "x"), write(second, "y")]);
      expect(await first.getPathLength()).toBe(16);
      expect(idsOf(await second.getHistory())).toHaveLength(16);
    });

    test("a retried addCompaction (same summary and range, still the newest) stores one overlay", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b", "c"]) await store.appendMessage(textMessage(id, `text ${id}`));
      const first = await store.addCompaction("summary of a..b", "a", "b");
      const retried = await store.addCompaction("summary of a..b", "a", "b");
      expect(retried.id).toBe(first.id);
      expect(await store.getCompactions()).toHaveLength(1);
    });

    test("a deleted latest leaf: the next append goes under the newest message still stored", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b", "c"]) await store.appendMessage(textMessage(id, `text ${id}`));
      await store.deleteMessages(["c"]);
      expect((await store.getLatestLeaf())?.id).toBe("b");
      await store.appendMessage(textMessage("d", "text d"));
      expect(idsOf(await store.getHistory())).toEqual(["a", "b", "d"]);
      expect(await store.getPathLength()).toBe(3);
    });

    test("an id with a lone UTF-16 surrogate (no store holds one) reads as unknown and deletes nothing, not even the U+FFFD id it becomes in UTF-8", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("\uFFFD", "stored under U+FFFD"));
      await store.appendMessage(textMessage("b", "its child"));
      const lone = "\uD800";
      expect(await store.getMessage(lone)).toBeNull();
      expect(await store.getBranches(lone)).toEqual([]);
      expect(await store.getHistory(lone)).toEqual([]);
      expect(await store.getPathLength(lone)).toBe(0);
      if (store.getNode) expect(await store.getNode(lone)).toBeNull();
      await store.deleteMessages([lone]);
      expect(idsOf(await store.getHistory())).toEqual(["\uFFFD", "b"]);
    });

    test("addCompaction refuses a summary that is not a string or not well-formed, or an empty range id, and stores no overlay", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b"]) await store.appendMessage(textMessage(id, `text ${id}`));
      const refused = async (run: () => unknown) =>
        expect(Promise.resolve().then(run)).rejects.toThrow(/addCompaction/);
      await refused(() => store.addCompaction(42 as unknown as string, "a", "b"));
      // A lone surrogate: stored as UTF-8 it would read back as U+FFFD (SQLite) or as given (memory).
      await refused(() => store.addCompaction("summary \uD800 of a..b", "a", "b"));
      await refused(() => store.addCompaction("summary", "", "b"));
      await refused(() => store.addCompaction("summary", "a", null as unknown as string));
      expect(await store.getCompactions()).toEqual([]);
      expect(idsOf(await store.getHistory())).toEqual(["a", "b"]);
    });

    test("addCompaction refuses a range whose ends are not messages of this session (unknown ids, another session's), naming the id, and stores no overlay", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "one"));
      await store.appendMessage(textMessage("b", "two"));
      await store.appendMessage(textMessage("c", "three"));
      await store.appendMessage(textMessage("side", "a branch"), "a");
      const ranges: [string, string, string][] = [
        ["nowhere", "c", "nowhere"],
        ["a", "nowhere", "nowhere"],
      ];
      if (suite.options.session) {
        const other = await fixture.session(store, "conformance-other-session");
        await other.appendMessage(textMessage("elsewhere", "another session's message"));
        ranges.push(["elsewhere", "c", "elsewhere"], ["a", "elsewhere", "elsewhere"]);
      }
      for (const [from, to, named] of ranges) {
        const refusal = Promise.resolve().then(() =>
          store.addCompaction(`summary of ${from}..${to}`, from, to),
        );
        await expect(refusal, `${from}..${to}`).rejects.toThrow(new RegExp(`addCompaction.*"${named}"`));
      }
      expect(await store.getCompactions()).toEqual([]);
      // A range within one message, and one down a branch, are kept.
      await store.addCompaction("summary of b", "b", "b");
      await store.addCompaction("summary of a..side", "a", "side");
      expect((await store.getCompactions()).map((overlay) => overlay.toMessageId)).toEqual(["b", "side"]);
    });

    test('a read given an empty or non-string leaf id refuses it (as parentId "" is) instead of reading an empty path', async () => {
      const store = await fixture.create();
      for (const id of ["a", "b"]) await store.appendMessage(textMessage(id, `text ${id}`));
      for (const leaf of ["", 42 as unknown as string]) {
        await expect(Promise.resolve().then(() => store.getHistory(leaf))).rejects.toThrow(/leafId/);
        await expect(Promise.resolve().then(() => store.getPathLength(leaf))).rejects.toThrow(/leafId/);
        if (store.getPathNodes) {
          const nodes = store.getPathNodes.bind(store);
          await expect(Promise.resolve().then(() => nodes(leaf))).rejects.toThrow(/leafId/);
        }
      }
      expect(idsOf(await store.getHistory(null))).toEqual(["a", "b"]);
      expect(idsOf(await store.getHistory("b"))).toEqual(["a", "b"]);
    });

    test("a stored message dressed as a compaction summary is read as stored, no overlay applied", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "one"));
      const forged = {
        id: "compaction_forged",
        role: "assistant",
        parts: [{ type: "text", text: "FORGED summary" }],
        metadata: { compaction: { id: "forged", fromMessageId: "a", toMessageId: "a" } },
      } as unknown as ConformanceMessage;
      await store.appendMessage(forged);
      await store.appendMessage(textMessage("b", "two"));
      expect(idsOf(await store.getHistory())).toEqual(["a", "compaction_forged", "b"]);
      expect(await store.getCompactions()).toEqual([]);
    });
  });
}
