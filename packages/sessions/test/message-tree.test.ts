import { isContextError } from "@contextblocks/core";
import { describe, expect, it } from "vitest";
import { estimateMessageTokens, SessionBuilder, type SessionMessage } from "../src/index.js";
import { InMemorySessionStore, InMemorySessions, inMemoryBackend } from "../src/memory/index.js";
import { type MessageRecord, MessageTree, messageBytes } from "../src/store-kit.js";

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
  it("refuses a compaction summary with a lone surrogate, which SQL stores would keep as U+FFFD", async () => {
    const tree = new MessageTree(new InMemorySessionStore());
    for (const id of ["a", "b"]) await tree.appendMessage(message(id, id));
    const error = await refusal(() => tree.addCompaction("summary \uDC00 of a and b", "a", "b"));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toBe(
      "addCompaction: the summary has a lone UTF-16 surrogate at index 8; nothing was stored",
    );
    expect(await tree.getCompactions()).toEqual([]);
    await tree.addCompaction("summary 😀 of a and b", "a", "b");
    expect((await tree.getHistory())[0]?.parts).toEqual([{ type: "text", text: "summary 😀 of a and b" }]);
  });

  it("refuses a compaction range whose ends are not messages of this session, naming the id; a long valid range and a retry pass", async () => {
    const sessions = new InMemorySessions();
    const tree = new MessageTree(new InMemorySessionStore({ sessionId: "one", sessions }));
    const other = new MessageTree(new InMemorySessionStore({ sessionId: "two", sessions }));
    for (let index = 0; index < 100; index++) await tree.appendMessage(message(`m${index}`, `text ${index}`));
    await tree.appendMessage(message("side", "a branch"), "m10");
    await other.appendMessage(message("theirs", "another session's"));
    const refusals: [string, string, string][] = [
      [
        "unknown",
        "m5",
        'addCompaction: fromMessageId "unknown" is not a message of this session; nothing was stored',
      ],
      [
        "m5",
        "unknown",
        'addCompaction: toMessageId "unknown" is not a message of this session; nothing was stored',
      ],
      [
        "theirs",
        "m5",
        'addCompaction: fromMessageId "theirs" is not a message of this session; nothing was stored',
      ],
      [
        "m5",
        "theirs",
        'addCompaction: toMessageId "theirs" is not a message of this session; nothing was stored',
      ],
    ];
    for (const [from, to, expected] of refusals) {
      const error = await refusal(() => tree.addCompaction("S", from, to));
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toBe(expected);
    }
    const long = "x".repeat(5_000);
    expect((await refusal(() => tree.addCompaction("S", long, "m5"))).message).toContain(
      `"${"x".repeat(50)}`,
    );
    expect((await refusal(() => tree.addCompaction("S", long, "m5"))).message.length).toBeLessThan(500);
    expect(await tree.getCompactions()).toEqual([]);
    expect(await other.getCompactions()).toEqual([]);
    const first = await tree.addCompaction("S", "m0", "m98");
    expect((await tree.addCompaction("S", "m0", "m98")).id).toBe(first.id);
    await tree.addCompaction("S2", "m3", "side");
    // Both ends stored but the range runs backwards: stored (checking the order would read the range) and
    // never shown.
    await tree.addCompaction("S3", "m99", "m0");
    expect((await tree.getCompactions()).length).toBe(3);
    expect(ids(await tree.getHistory("m99"))).toEqual([`compaction_${first.id}`, "m99"]);
  });

  it('refuses an empty or non-string leaf id on every read that takes one, as it refuses parentId ""', async () => {
    const tree = new MessageTree(new InMemorySessionStore());
    for (const id of ["a", "b"]) await tree.appendMessage(message(id, id));
    const reads: [string, (leaf: string) => Promise<unknown>][] = [
      ["getHistory", (leaf) => tree.getHistory(leaf)],
      ["getPathLength", (leaf) => tree.getPathLength(leaf)],
      ["getPathNodes", (leaf) => tree.getPathNodes(leaf)],
      ["getPathTokens", (leaf) => tree.getPathTokens(leaf)],
      ["getRecentHistory", (leaf) => tree.getRecentHistory(leaf, 1_000)],
    ];
    for (const [operation, read] of reads) {
      for (const [leaf, shown] of [
        ["", '""'],
        [7, "number 7"],
      ] as const) {
        const error = await refusal(() => read(leaf as string));
        expect(error.code).toBe("INVALID_INPUT");
        expect(error.message).toBe(
          `${operation}: leafId must be a non-empty string (undefined or null: the latest leaf), got ${shown}`,
        );
      }
    }
    expect(ids(await tree.getHistory(null))).toEqual(["a", "b"]);
    expect(await tree.getPathLength("b")).toBe(2);
  });

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

/** The reference store, counting the records its path reads return. */
class CountingStore extends InMemorySessionStore {
  pathRecords = 0;
  pathReads = 0;
  override async readPath(
    leafId: string | undefined,
    options: { limit: number; content: boolean },
  ): Promise<MessageRecord[]> {
    const records = await super.readPath(leafId, options);
    this.pathReads++;
    this.pathRecords += records.length;
    return records;
  }
}

describe("MessageTree reads that need not read the whole path", () => {
  it("takes the path's length and tokens from a store's readPathTotals, reading no path", async () => {
    const store = new CountingStore();
    const tree = new MessageTree(store);
    await tree.appendChain(
      Array.from({ length: 40 }, (_, index) => message(`m${index}`, `message ${index}`)),
      undefined,
    );
    const history = await tree.getHistory();
    store.pathReads = 0;
    expect(await tree.getPathLength()).toBe(40);
    expect(await tree.getPathTokens()).toBe(estimateMessageTokens(history));
    expect(store.pathReads).toBe(0);
    // With an overlay the stamps are summed along the path, the overlay applied.
    await tree.addCompaction("S", "m0", "m9");
    expect(await tree.getPathTokens()).toBe(estimateMessageTokens(await tree.getHistory()));
  });

  it("a store that reads whole paths is read once by getPathMessages; leaf first under a budget, only its newest part", async () => {
    expect(new MessageTree(new CountingStore()).getPathMessages).toBeUndefined();
    const store = Object.assign(new CountingStore(), { wholePathReads: true });
    const tree = new MessageTree(store);
    await tree.appendChain(
      Array.from({ length: 300 }, (_, index) => message(`m${index}`, `message ${index}`)),
      undefined,
    );
    const size = messageBytes(message("m299", "message 299"));
    store.pathRecords = 0;
    const read = tree.getPathMessages as NonNullable<MessageTree["getPathMessages"]>;
    const newest = await read(undefined, { maxBytes: size * 10, newestFirst: true });
    // The first message past the budget stops the read; the caller cuts exactly.
    expect(ids(newest.messages)).toEqual(Array.from({ length: 11 }, (_, index) => `m${289 + index}`));
    expect(newest.truncated).toBe(true);
    expect(store.pathRecords).toBeLessThanOrEqual(32);
    // A budget past the path's size reads it all, piece by piece, each record once.
    const path = ids(await tree.getHistory("m150"));
    store.pathRecords = 0;
    const whole = await read("m150", { maxBytes: 1e9, newestFirst: true });
    expect(ids(whole.messages)).toEqual(path);
    expect(whole.truncated).toBe(false);
    expect(store.pathRecords).toBe(151);
    // Root first (or unbudgeted) it is the stored path, overlays not applied.
    await tree.addCompaction("S", "m0", "m1");
    expect((await read()).messages).toHaveLength(300);
  });
});

describe("Session.appendMessages on a storage-contract store", () => {
  it("stores the turn in one append: all of it or none, with one event per stored message", async () => {
    const session = new SessionBuilder(inMemoryBackend()).forSession("chat").build();
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
