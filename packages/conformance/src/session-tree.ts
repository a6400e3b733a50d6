import { expect } from "vitest";
import type { SessionStoreUnderTest } from "./session-options.js";
import { idsOf, type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** Appends, auto-parenting, root-to-leaf paths, branches, path lengths, updates and deletes. */
export function sessionTreeGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  sessionGroup("tree", suite, null, (fixture, test) => {
    test("an empty session has no history, no leaf and a path length of 0", async () => {
      const store = await fixture.create();
      expect(await store.getHistory()).toEqual([]);
      expect(await store.getLatestLeaf()).toBeNull();
      expect(await store.getPathLength()).toBe(0);
    });

    test("appendMessage without a parent goes under the latest leaf; getHistory reads root to leaf", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b", "c"]) await store.appendMessage(textMessage(id, `text ${id}`));
      expect(idsOf(await store.getHistory())).toEqual(["a", "b", "c"]);
      expect((await store.getLatestLeaf())?.id).toBe("c");
      expect(await store.getPathLength()).toBe(3);
      expect(await store.getMessage("b")).toEqual(textMessage("b", "text b"));
      expect(await store.getMessage("missing")).toBeNull();
    });

    test("a parent with two children is a branch; history and length follow the chosen leaf", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("q", "question"));
      await store.appendMessage(textMessage("a1", "first answer", "assistant"));
      await store.appendMessage(textMessage("a2", "second answer", "assistant"), "q");
      await store.appendMessage(textMessage("f", "follow-up"));
      expect(idsOf(await store.getBranches("q"))).toEqual(["a1", "a2"]);
      expect(idsOf(await store.getHistory())).toEqual(["q", "a2", "f"]);
      expect(idsOf(await store.getHistory("a1"))).toEqual(["q", "a1"]);
      expect(await store.getPathLength("a1")).toBe(2);
      expect(await store.getPathLength("f")).toBe(3);
    });

    test("parentId null starts a new root, which becomes the latest leaf", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "one"));
      await store.appendMessage(textMessage("r", "new root"), null);
      expect(idsOf(await store.getHistory())).toEqual(["r"]);
      expect(idsOf(await store.getHistory("a"))).toEqual(["a"]);
    });

    test("updateMessage changes the content in place; the tree is unchanged", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b", "c"]) await store.appendMessage(textMessage(id, `text ${id}`));
      await store.updateMessage(textMessage("b", "edited"));
      const history = await store.getHistory();
      expect(idsOf(history)).toEqual(["a", "b", "c"]);
      expect(history[1]?.parts[0]?.text).toBe("edited");
    });

    test("deleteMessages removes the messages; clearMessages removes everything", async () => {
      const store = await fixture.create();
      for (const id of ["a", "b", "c"]) await store.appendMessage(textMessage(id, `text ${id}`));
      await store.deleteMessages(["c"]);
      expect(idsOf(await store.getHistory())).toEqual(["a", "b"]);
      expect(await store.getMessage("c")).toBeNull();
      await store.addCompaction("s", "a", "b");
      await store.clearMessages();
      expect(await store.getHistory()).toEqual([]);
      expect(await store.getCompactions()).toEqual([]);
      await store.appendMessage(textMessage("c", "after clear"));
      expect(idsOf(await store.getHistory())).toEqual(["c"]);
    });

    test("refuses an existing id and a missing parent, and stores nothing", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "original"));
      await expect(
        Promise.resolve().then(() => store.appendMessage(textMessage("a", "again"))),
      ).rejects.toThrow();
      await expect(
        Promise.resolve().then(() => store.appendMessage(textMessage("b", "orphan"), "ghost")),
      ).rejects.toThrow();
      await expect(
        Promise.resolve().then(() => store.appendMessage(textMessage("c", "self"), "c")),
      ).rejects.toThrow();
      expect(idsOf(await store.getHistory())).toEqual(["a"]);
      expect((await store.getMessage("a"))?.parts[0]?.text).toBe("original");
      expect(await store.getMessage("b")).toBeNull();
      expect(await store.getMessage("c")).toBeNull();
    });
  });
}
