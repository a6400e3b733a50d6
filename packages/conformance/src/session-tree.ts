import { expect } from "vitest";
import type { SessionProviderUnderTest } from "./session-options.js";
import { idsOf, type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/** Appends, auto-parenting, root-to-leaf paths, branches, path lengths, updates and deletes. */
export function sessionTreeGroup<P extends SessionProviderUnderTest>(suite: SessionSuite<P>): void {
  sessionGroup("tree", suite, null, (fixture, test) => {
    test("an empty session has no history, no leaf and a path length of 0", async () => {
      const provider = await fixture.create();
      expect(await provider.getHistory()).toEqual([]);
      expect(await provider.getLatestLeaf()).toBeNull();
      expect(await provider.getPathLength()).toBe(0);
    });

    test("appendMessage without a parent goes under the latest leaf; getHistory reads root to leaf", async () => {
      const provider = await fixture.create();
      for (const id of ["a", "b", "c"]) await provider.appendMessage(textMessage(id, `text ${id}`));
      expect(idsOf(await provider.getHistory())).toEqual(["a", "b", "c"]);
      expect((await provider.getLatestLeaf())?.id).toBe("c");
      expect(await provider.getPathLength()).toBe(3);
      expect(await provider.getMessage("b")).toEqual(textMessage("b", "text b"));
      expect(await provider.getMessage("missing")).toBeNull();
    });

    test("a parent with two children is a branch; history and length follow the chosen leaf", async () => {
      const provider = await fixture.create();
      await provider.appendMessage(textMessage("q", "question"));
      await provider.appendMessage(textMessage("a1", "first answer", "assistant"));
      await provider.appendMessage(textMessage("a2", "second answer", "assistant"), "q");
      await provider.appendMessage(textMessage("f", "follow-up"));
      expect(idsOf(await provider.getBranches("q"))).toEqual(["a1", "a2"]);
      expect(idsOf(await provider.getHistory())).toEqual(["q", "a2", "f"]);
      expect(idsOf(await provider.getHistory("a1"))).toEqual(["q", "a1"]);
      expect(await provider.getPathLength("a1")).toBe(2);
      expect(await provider.getPathLength("f")).toBe(3);
    });

    test("parentId null starts a new root, which becomes the latest leaf", async () => {
      const provider = await fixture.create();
      await provider.appendMessage(textMessage("a", "one"));
      await provider.appendMessage(textMessage("r", "new root"), null);
      expect(idsOf(await provider.getHistory())).toEqual(["r"]);
      expect(idsOf(await provider.getHistory("a"))).toEqual(["a"]);
    });

    test("updateMessage changes the content in place; the tree is unchanged", async () => {
      const provider = await fixture.create();
      for (const id of ["a", "b", "c"]) await provider.appendMessage(textMessage(id, `text ${id}`));
      await provider.updateMessage(textMessage("b", "edited"));
      const history = await provider.getHistory();
      expect(idsOf(history)).toEqual(["a", "b", "c"]);
      expect(history[1]?.parts[0]?.text).toBe("edited");
    });

    test("deleteMessages removes the messages; clearMessages removes everything", async () => {
      const provider = await fixture.create();
      for (const id of ["a", "b", "c"]) await provider.appendMessage(textMessage(id, `text ${id}`));
      await provider.deleteMessages(["c"]);
      expect(idsOf(await provider.getHistory())).toEqual(["a", "b"]);
      expect(await provider.getMessage("c")).toBeNull();
      await provider.addCompaction("s", "a", "b");
      await provider.clearMessages();
      expect(await provider.getHistory()).toEqual([]);
      expect(await provider.getCompactions()).toEqual([]);
      await provider.appendMessage(textMessage("c", "after clear"));
      expect(idsOf(await provider.getHistory())).toEqual(["c"]);
    });

    test("refuses an existing id and a missing parent, and stores nothing", async () => {
      const provider = await fixture.create();
      await provider.appendMessage(textMessage("a", "original"));
      await expect(
        Promise.resolve().then(() => provider.appendMessage(textMessage("a", "again"))),
      ).rejects.toThrow();
      await expect(
        Promise.resolve().then(() => provider.appendMessage(textMessage("b", "orphan"), "ghost")),
      ).rejects.toThrow();
      await expect(
        Promise.resolve().then(() => provider.appendMessage(textMessage("c", "self"), "c")),
      ).rejects.toThrow();
      expect(idsOf(await provider.getHistory())).toEqual(["a"]);
      expect((await provider.getMessage("a"))?.parts[0]?.text).toBe("original");
      expect(await provider.getMessage("b")).toBeNull();
      expect(await provider.getMessage("c")).toBeNull();
    });
  });
}
