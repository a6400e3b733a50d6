import { expect } from "vitest";
import type { ConformanceNode, SessionStoreUnderTest } from "./session-options.js";
import { type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

type WithNodes = Required<Pick<SessionStoreUnderTest, "getNode" | "getTree">>;

function withNodes(store: SessionStoreUnderTest): WithNodes {
  if (typeof store.getNode !== "function" || typeof store.getTree !== "function") {
    throw new Error("conformance: capabilities.tree is declared, but the store has no getNode or getTree");
  }
  return store as WithNodes;
}

const links = (nodes: readonly ConformanceNode[]) => nodes.map((node) => [node.id, node.parentId]);

/** The tree without content: a message's parent (`getNode`) and every message in storage order (`getTree`). */
export function sessionNodesGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  const missing = suite.options.capabilities.tree ? null : "capabilities.tree not declared";
  sessionGroup("nodes", suite, missing, (fixture, test) => {
    test("getNode returns a message's parent and role; null for an unknown id", async () => {
      const store = await fixture.create();
      const nodes = withNodes(store);
      await store.appendMessage(textMessage("q", "question"));
      await store.appendMessage(textMessage("a1", "first", "assistant"));
      await store.appendMessage(textMessage("a2", "second", "assistant"), "q");
      await store.appendMessage(textMessage("r", "new root"), null);
      expect(await nodes.getNode("a2")).toMatchObject({ id: "a2", parentId: "q", role: "assistant" });
      expect(await nodes.getNode("a1")).toMatchObject({ parentId: "q" });
      expect(await nodes.getNode("q")).toMatchObject({ id: "q", parentId: null, role: "user" });
      expect(await nodes.getNode("r")).toMatchObject({ parentId: null });
      expect(await nodes.getNode("missing")).toBeNull();
    });

    test("getTree lists every message with its parent in storage order, up to the limit", async () => {
      const store = await fixture.create();
      const nodes = withNodes(store);
      expect(await nodes.getTree()).toEqual([]);
      await store.appendMessage(textMessage("q", "question"));
      await store.appendMessage(textMessage("a1", "first", "assistant"));
      await store.appendMessage(textMessage("a2", "second", "assistant"), "q");
      await store.appendMessage(textMessage("f", "follow-up"));
      expect(links(await nodes.getTree())).toEqual([
        ["q", null],
        ["a1", "q"],
        ["a2", "q"],
        ["f", "a2"],
      ]);
      expect(links(await nodes.getTree({ limit: 2 }))).toEqual([
        ["q", null],
        ["a1", "q"],
      ]);
      await store.deleteMessages(["a1"]);
      expect(await nodes.getNode("a1")).toBeNull();
      expect(links(await nodes.getTree()).map(([id]) => id)).toEqual(["q", "a2", "f"]);
    });

    if (suite.options.session) {
      test("getNode and getTree see only their own session", async () => {
        const store = await fixture.create();
        const other = await fixture.session(store, "nodes-other-session");
        await store.appendMessage(textMessage("mine", "mine"));
        await other.appendMessage(textMessage("theirs", "theirs"));
        expect(await withNodes(store).getNode("theirs")).toBeNull();
        expect(links(await withNodes(store).getTree())).toEqual([["mine", null]]);
        expect(links(await withNodes(other).getTree())).toEqual([["theirs", null]]);
      });
    }
  });
}
