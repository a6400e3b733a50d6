import { expect } from "vitest";
import type { ConformanceNode, SessionStoreUnderTest } from "./session-options.js";
import { idsOf, type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

type Node = Required<Pick<SessionStoreUnderTest, "getNode" | "getTree">>;

function nodesOf(store: SessionStoreUnderTest): Node {
  if (typeof store.getNode !== "function" || typeof store.getTree !== "function") {
    throw new Error("conformance: capabilities.tree is declared, but the store has no getNode or getTree");
  }
  return store as Node;
}

/** A tree with a branch and a second root: q → a1 → u2 → a3, q → b1 (branch), r (root). */
async function buildTree(store: SessionStoreUnderTest): Promise<void> {
  await store.appendMessage(textMessage("q", "question"));
  await store.appendMessage(textMessage("a1", "first answer", "assistant"));
  await store.appendMessage(textMessage("u2", "follow-up"));
  await store.appendMessage(textMessage("b1", "other answer", "assistant"), "q");
  await store.appendMessage(textMessage("a3", "second answer", "assistant"), "u2");
}

/** The path by a `getNode` walk from `leafId`, root first: what a streamed read plans on without `getPathNodes`. */
async function walk(store: Node, leafId: string): Promise<string[]> {
  const path: string[] = [];
  for (let id: string | null = leafId; id !== null && path.length < 100; ) {
    const node: ConformanceNode | null = await store.getNode(id);
    if (node === null) break;
    path.push(node.id);
    id = node.parentId;
  }
  return path.reverse();
}

/**
 * What streamed history reads and a mirrored change feed rely on (Cloudflare agents' Sessions API's
 * `history()`, `historyBatches()`, `subscribe()` and `importMessage()`): parent links that give the path
 * `getHistory` reads, a replay of appends with explicit parents that reproduces the tree, and, when the store
 * has them, `getPathNodes`, `getPathMessages`, `getMessages` and `importMessage`.
 */
export function sessionPathReadsGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  const missing = suite.options.capabilities.tree ? null : "capabilities.tree not declared";
  sessionGroup("path reads and replay", suite, missing, (fixture, test) => {
    test("a getNode walk from a leaf gives the path getHistory reads, overlays aside", async () => {
      const store = await fixture.create();
      await buildTree(store);
      for (const leaf of ["a3", "b1"]) {
        expect(await walk(nodesOf(store), leaf)).toEqual(idsOf(await store.getHistory(leaf)));
      }
    });

    test("appends replayed with explicit parents, in storage order, onto a fresh store reproduce the tree", async () => {
      const source = await fixture.create();
      await buildTree(source);
      await source.appendMessage(textMessage("r", "a new root"), null);
      await source.updateMessage(textMessage("a1", "first answer, edited", "assistant"));
      const mirror = await fixture.create();
      for (const node of await nodesOf(source).getTree()) {
        await mirror.appendMessage((await source.getMessage(node.id)) as never, node.parentId);
      }
      for (const leaf of ["a3", "b1", "r"]) {
        expect(await mirror.getHistory(leaf)).toEqual(await source.getHistory(leaf));
      }
      expect((await mirror.getLatestLeaf())?.id).toBe((await source.getLatestLeaf())?.id);
    });

    test("getPathNodes (when present): the path root..leaf without content, overlays not applied", async () => {
      const store = await fixture.create();
      if (typeof store.getPathNodes !== "function") return;
      expect(await store.getPathNodes()).toEqual([]);
      await buildTree(store);
      await store.addCompaction("SUMMARY", "a1", "u2");
      const path = await store.getPathNodes();
      expect(path.map((node) => [node.id, node.parentId, node.role])).toEqual([
        ["q", null, "user"],
        ["a1", "q", "assistant"],
        ["u2", "a1", "user"],
        ["a3", "u2", "assistant"],
      ]);
      expect(idsOf(await store.getPathNodes("b1"))).toEqual(["q", "b1"]);
      expect(await store.getPathNodes("missing")).toEqual([]);
    });

    test("getPathMessages (when present): the stored path root..leaf, overlays not applied; a budget keeps a prefix", async () => {
      const store = await fixture.create();
      if (typeof store.getPathMessages !== "function") return;
      expect(await store.getPathMessages()).toEqual({ messages: [], truncated: false });
      await buildTree(store);
      await store.addCompaction("SUMMARY", "a1", "u2");
      const whole = await store.getPathMessages();
      expect(whole.truncated).toBe(false);
      expect(idsOf(whole.messages)).toEqual(["q", "a1", "u2", "a3"]);
      expect(whole.messages[2]).toEqual(await store.getMessage("u2"));
      expect(idsOf((await store.getPathMessages("b1")).messages)).toEqual(["q", "b1"]);
      expect(await store.getPathMessages("missing")).toEqual({ messages: [], truncated: false });
      // A budget under the first message: the store may stop after it (at least the first message is
      // there, and only a prefix of the path); `truncated` says whether messages were left out.
      const budgeted = await store.getPathMessages("a3", { maxBytes: 1 });
      expect(budgeted.messages.length).toBeGreaterThanOrEqual(1);
      expect(idsOf(budgeted.messages)).toEqual(["q", "a1", "u2", "a3"].slice(0, budgeted.messages.length));
      expect(budgeted.truncated).toBe(budgeted.messages.length < 4);
      // Leaf first, a budget keeps the newest part (still root first), at least the leaf.
      const newest = await store.getPathMessages("a3", { maxBytes: 1, newestFirst: true });
      expect(newest.messages.length).toBeGreaterThanOrEqual(1);
      expect(idsOf(newest.messages)).toEqual(["q", "a1", "u2", "a3"].slice(4 - newest.messages.length));
      expect(newest.truncated).toBe(newest.messages.length < 4);
      // A budget over the whole path keeps the whole path.
      expect(await store.getPathMessages("a3", { maxBytes: 1_000_000 })).toEqual(whole);
    });

    test("getMessages (when present): messages in the order asked, unknown and other sessions' ids skipped", async () => {
      const store = await fixture.create();
      if (typeof store.getMessages !== "function") return;
      await buildTree(store);
      if (suite.options.session) {
        const other = await fixture.session(store, "conformance-other-session");
        await other.appendMessage(textMessage("elsewhere", "not this session"));
      }
      const messages = await store.getMessages(["a3", "missing", "q", "elsewhere", "b1"]);
      expect(idsOf(messages)).toEqual(["a3", "q", "b1"]);
      expect(messages[0]).toEqual(await store.getMessage("a3"));
      expect(await store.getMessages([])).toEqual([]);
    });

    test("importMessage (when present): keeps the parent and time; refuses a stored id, a missing parent and a cycle", async () => {
      const store = await fixture.create();
      if (typeof store.importMessage !== "function") return;
      const nodes = nodesOf(store);
      await store.importMessage(textMessage("x1", "first"), null, "2024-05-06T07:08:09.000Z");
      await store.importMessage(textMessage("x2", "second", "assistant"), "x1", "2024-05-06T07:09:00.000Z");
      await store.importMessage(textMessage("x3", "third"), "x2", "2024-05-06T07:10:00.000Z");
      expect(idsOf(await store.getHistory("x3"))).toEqual(["x1", "x2", "x3"]);
      const stored = (await nodes.getNode("x2"))?.createdAt;
      if (stored != null) expect(Date.parse(stored)).toBe(Date.parse("2024-05-06T07:09:00.000Z"));
      await expect(
        Promise.resolve().then(() =>
          store.importMessage?.(textMessage("x1", "again"), "x3", "2024-05-06T08:00:00.000Z"),
        ),
      ).rejects.toThrow();
      await expect(
        Promise.resolve().then(() =>
          store.importMessage?.(textMessage("y", "y"), "missing", "2024-05-06T08:00:00.000Z"),
        ),
      ).rejects.toThrow();
      await store.deleteMessages(["x2"]);
      await expect(
        Promise.resolve().then(() =>
          store.importMessage?.(textMessage("x2", "back"), "x3", "2024-05-06T08:00:00.000Z"),
        ),
      ).rejects.toThrow();
      expect(idsOf(await store.getHistory("x3"))).toEqual(["x3"]);
    });
  });
}
