import { isContextError } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import { MessageTree, Session, type SessionMessage } from "../src/index.js";
import { InMemorySessionStore, InMemorySessions, inMemoryBackend } from "../src/memory/index.js";

// The rules the message tree applies once for every store on the storage contract.

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

const ids = (messages: readonly { id: string }[]) => messages.map((entry) => entry.id);

async function refusal(run: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await run().then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(isContextError(error), `expected a ContextError, got ${String(error)}`).toBe(true);
  return error as { code: string; message: string };
}

describe("MessageTree", () => {
  it("stores a turn whole or not at all: a refused message k leaves messages 1…k−1 unstored", async () => {
    const tree = new MessageTree(new InMemorySessionStore());
    await tree.appendMessage(message("taken", "already here"));
    const turn = [message("u1", "question"), message("a1", "answer", "assistant"), message("taken", "clash")];
    const error = await refusal(() => tree.appendChain(turn, undefined));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain('"taken"');
    expect(ids(await tree.getHistory())).toEqual(["taken"]);
    expect(await tree.getMessage("u1")).toBeNull();
  });

  it("a retried turn whose first attempt was stored succeeds without second copies, and goes on after it", async () => {
    const tree = new MessageTree(new InMemorySessionStore());
    const turn = [message("u1", "question"), message("a1", "answer", "assistant")];
    await tree.appendChain(turn, undefined);
    const placed = await tree.appendChain([...turn, message("u2", "follow-up")], undefined);
    expect(placed.parentId).toBeNull();
    expect(ids(await tree.getHistory())).toEqual(["u1", "a1", "u2"]);
    expect((await tree.getTree()).length).toBe(3);
  });

  it("refuses a stale leaf with CONFLICT, and a branch under an older message stays legal", async () => {
    const tree = new MessageTree(new InMemorySessionStore());
    await tree.appendChain([message("a", "one"), message("b", "two")], undefined);
    const error = await refusal(() =>
      tree.appendChain([message("c", "three")], undefined, { expectedLeafId: "a" }),
    );
    expect(error.code).toBe("CONFLICT");
    expect(error.message).toContain('"b"');
    expect(await tree.getMessage("c")).toBeNull();
    await tree.appendChain([message("side", "branch")], "a", { expectedLeafId: "b" });
    expect(ids(await tree.getHistory())).toEqual(["a", "side"]);
  });

  it("refuses an id deleted without its children, naming no message of another session", async () => {
    const sessions = new InMemorySessions();
    const mine = new MessageTree(new InMemorySessionStore({ sessionId: "mine", sessions }));
    const theirs = new MessageTree(new InMemorySessionStore({ sessionId: "theirs", sessions }));
    await theirs.appendChain([message("their-root", "x"), message("their-secret-child", "y")], undefined);
    await mine.appendChain([message("p", "parent"), message("child", "kept")], undefined);
    await mine.deleteMessages(["p"]);
    const error = await refusal(() => mine.appendMessage(message("p", "again")));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain('"p"');
    expect(error.message).not.toContain("their");
    // The same id deleted in another session and reused there names nothing of this one either.
    await theirs.deleteMessages(["their-root"]);
    const other = await refusal(() => theirs.appendMessage(message("their-root", "again")));
    expect(other.message).not.toContain("child");
  });

  it("refuses the same id twice in one turn, and a message as its own parent, before the store is asked", async () => {
    const tree = new MessageTree(new InMemorySessionStore());
    await tree.appendMessage(message("a", "one"));
    expect(
      (await refusal(() => tree.appendChain([message("x", "1"), message("x", "2")], undefined))).code,
    ).toBe("INVALID_INPUT");
    expect((await refusal(() => tree.appendMessage(message("a", "one"), "a"))).message).toMatch(/own parent/);
    expect(ids(await tree.getHistory())).toEqual(["a"]);
  });

  it("keeps token stamps on the records and sums them with overlays applied", async () => {
    const tree = new MessageTree(new InMemorySessionStore());
    await tree.appendChain(
      [message("a", "one two three"), message("b", "four"), message("c", "five six")],
      null,
    );
    const whole = await tree.getPathTokens();
    await tree.addCompaction("S", "a", "b");
    expect(await tree.getPathTokens()).toBeLessThan(whole);
    const records = await tree.storage.readPath(undefined, { limit: 10, content: false });
    expect(records.every((record) => typeof record.tokens === "number" && record.tokens > 0)).toBe(true);
  });

  it("keeps the calibration in the store when it can, else in the tree", async () => {
    const sessions = new InMemorySessions();
    const kept = new MessageTree(new InMemorySessionStore({ sessionId: "s", sessions }));
    await kept.setTokenCalibration(1.5);
    expect(
      await new MessageTree(new InMemorySessionStore({ sessionId: "s", sessions })).getTokenCalibration(),
    ).toBe(1.5);
    const plain = new InMemorySessionStore();
    Object.defineProperty(plain, "readCalibration", { value: undefined });
    Object.defineProperty(plain, "writeCalibration", { value: undefined });
    const tree = new MessageTree(plain);
    await tree.setTokenCalibration(2);
    expect(await tree.getTokenCalibration()).toBe(2);
    expect((await refusal(() => tree.setTokenCalibration(-1))).code).toBe("INVALID_INPUT");
  });
});

describe("Session.appendMessages on a storage-contract store", () => {
  it("stores the turn in one append: all of it or none, with one event per stored message", async () => {
    const session = Session.create(inMemoryBackend()).forSession("chat");
    const events: string[] = [];
    session.subscribe((event) => {
      if (event.type === "message-appended") events.push(`${event.messageId}<${event.parentId}`);
    });
    await session.appendMessage(message("a", "first"));
    await expect(
      session.appendMessages([message("b", "second"), message("a", "clash")]),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(ids(await session.getHistory())).toEqual(["a"]);
    await session.appendMessages([message("b", "second"), message("c", "third", "assistant")]);
    expect(ids(await session.getHistory())).toEqual(["a", "b", "c"]);
    expect(events).toEqual(["a<null", "b<a", "c<b"]);
  });
});
