import { isCompactionMessage, Session, type SessionMessage } from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { describe, expect, it } from "vitest";
import {
  InMemoryKeyValueNamespace,
  KeyValueSessionStore,
  type SingleWriter,
  WriteQueue,
} from "../src/index.js";

function message(id: string, role: "user" | "assistant", text: string): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly SessionMessage[]) => messages.map((entry) => entry.id);

describe("a Session on KeyValueSessionStore", () => {
  it("stores turns, branches, compacts, and reads the same history after a restart", async () => {
    const namespace = new InMemoryKeyValueNamespace({ pageSize: 3 });
    const open = () =>
      new Session({
        store: new KeyValueSessionStore({ namespace, sessionId: "chat" }),
        compaction: createCompactFunction({
          summarize: async () => "The user asked about tides; the assistant explained them.",
          protectHead: 1,
          tailTokenBudget: 1,
          minTailMessages: 2,
        }),
      });
    const session = open();
    await session.appendMessages([
      message("u1", "user", "When is high tide?"),
      message("a1", "assistant", "At noon."),
    ]);
    await session.appendMessages([
      message("u2", "user", "And low tide?"),
      message("a2", "assistant", "6pm."),
    ]);
    // A regenerated answer: a branch under u2, which becomes the latest leaf.
    await session.appendMessage(message("a2-again", "assistant", "Around six in the evening."), "u2");
    expect(ids(await session.store.getBranches("u2"))).toEqual(["a2", "a2-again"]);
    expect(ids(await session.getHistory())).toEqual(["u1", "a1", "u2", "a2-again"]);
    expect(ids(await session.getHistory("a2"))).toEqual(["u1", "a1", "u2", "a2"]);

    const compacted = await session.compact();
    expect(compacted).toMatchObject({ fromMessageId: "a1", toMessageId: "a1" });
    const history = await session.getHistory();
    expect(history).toHaveLength(4);
    expect(history.map((entry) => isCompactionMessage(entry))).toEqual([false, true, false, false]);
    expect(ids([history[0] as SessionMessage, ...history.slice(2)])).toEqual(["u1", "u2", "a2-again"]);

    // A new Session on the same database: a restart, or the next request to a Worker.
    const restarted = open();
    expect(await restarted.getHistory()).toEqual(history);
    expect(await restarted.getCompactions()).toEqual(await session.getCompactions());
  });
});

describe("KeyValueSessionStore's session id", () => {
  it("refuses a lone UTF-16 surrogate by name (it has no key encoding), and keeps a paired one", async () => {
    const namespace = new InMemoryKeyValueNamespace();
    expect(() => new KeyValueSessionStore({ namespace, sessionId: "chat-\ud83d" })).toThrow(
      /sessionId holds a lone UTF-16 surrogate/,
    );
    const session = new Session({
      store: new KeyValueSessionStore({ namespace, sessionId: "chat-\ud83d\ude00" }),
    });
    await session.appendMessage(message("u1", "user", "hello"));
    expect(ids(await session.getHistory())).toEqual(["u1"]);
  });
});

describe("the single writer is what keeps two writers from forking a conversation", () => {
  /** Two tabs on one conversation each append a turn under the latest leaf, at once. */
  async function twoTabsAppendAtOnce(writerOfEachTab: () => SingleWriter | undefined) {
    const namespace = new InMemoryKeyValueNamespace();
    const tab = () => {
      const writer = writerOfEachTab();
      return new Session({
        store: new KeyValueSessionStore({ namespace, sessionId: "chat", ...(writer ? { writer } : {}) }),
      });
    };
    const first = tab();
    await first.appendMessage(message("hello", "user", "Hello"));
    await Promise.all([
      first.appendMessages([message("q1", "user", "From tab one"), message("r1", "assistant", "One")]),
      tab().appendMessages([message("q2", "user", "From tab two"), message("r2", "assistant", "Two")]),
    ]);
    return { children: ids(await first.store.getBranches("hello")), path: ids(await first.getHistory()) };
  }

  it("with the database's one write queue (the default), the second turn goes under the first", async () => {
    const { children, path } = await twoTabsAppendAtOnce(() => undefined);
    expect(children).toHaveLength(1);
    expect(path).toHaveLength(5);
  });

  it.each([
    ["without a lock", () => ({ run: <T>(write: () => Promise<T>) => write() })],
    ["with a queue per store instance instead of per database", () => new WriteQueue()],
  ])("%s, both turns land under the same leaf: the conversation forks", async (_name, writer) => {
    const { children, path } = await twoTabsAppendAtOnce(writer);
    expect(children.sort()).toEqual(["q1", "q2"]);
    expect(path).toHaveLength(3);
  });
});
