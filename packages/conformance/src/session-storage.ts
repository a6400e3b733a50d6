import type { MessageRecord, SessionStoreV1 } from "@contextblocks/sessions/store-kit";
import { afterEach, describe, expect, it } from "vitest";

/** What `describeSessionStoreV1` is given besides the factory. */
export interface SessionStorageOptions<S extends SessionStoreV1> {
  /** The optional members the store has, declared as data; a declared one is checked, an undeclared one skipped. */
  capabilities: { search?: boolean; calibration?: boolean; pathTotals?: boolean };
  /** A store for another session on the same database as `store`. Enables the checks across sessions. */
  session?(store: S, sessionId: string): S | Promise<S>;
  /** A new instance on the same database and session (a restart). Enables the durability check. */
  reopen?(store: S): S | Promise<S>;
  /** Releases one instance after its test. */
  cleanup?(store: S): void | Promise<void>;
  /** Per-test timeout in milliseconds. */
  timeout?: number;
  /** Characters of the large text part of the content checks. Default 1,048,576. */
  largePartSize?: number;
  /** Appends started at once by the two-writer checks. Default 8. */
  concurrentAppends?: number;
}

const optionalMembers = {
  search: ["search"],
  calibration: ["readCalibration", "writeCalibration"],
  pathTotals: ["readPathTotals"],
} as const;

/** A record as the message tree writes one: the message's JSON, its sizes, stamp and searchable text. */
export function conformanceRecord(id: string, text: string, role = "user"): MessageRecord {
  const content = JSON.stringify({ id, role, parts: [{ type: "text", text }] });
  return {
    id,
    parentId: null,
    role,
    content,
    createdAt: "2026-01-02T03:04:05.000Z",
    bytes: new TextEncoder().encode(content).length,
    tokens: 4 + Math.ceil(text.length / 4),
    text,
  };
}

/** Makes the stores of one test and releases each after it. */
class StorageFixture<S extends SessionStoreV1> {
  readonly #made: S[] = [];
  constructor(
    readonly factory: () => S | Promise<S>,
    readonly options: SessionStorageOptions<S>,
  ) {}
  async create(): Promise<S> {
    return this.#track(await this.factory());
  }
  async session(store: S, sessionId: string): Promise<S> {
    return this.#track(
      await (this.options.session as NonNullable<typeof this.options.session>)(store, sessionId),
    );
  }
  async reopen(store: S): Promise<S> {
    return this.#track(await (this.options.reopen as NonNullable<typeof this.options.reopen>)(store));
  }
  async release(): Promise<void> {
    for (const store of this.#made.splice(0).reverse()) await this.options.cleanup?.(store);
  }
  #track(store: S): S {
    if (typeof store !== "object" || store === null)
      throw new TypeError("conformance: the factory must return a store");
    this.#made.push(store);
    return store;
  }
}

/**
 * The storage contract itself, called as the message tree calls it: records, paths, the atomic append and its
 * conflicts, updates, deletes, overlays, and two writers at once (appends started together, each resolving
 * on its own awaits, so a store that reads the leaf and writes in two steps forks and fails).
 */
export function sessionStorageGroup<S extends SessionStoreV1>(
  factory: () => S | Promise<S>,
  options: SessionStorageOptions<S>,
): void {
  const fixture = new StorageFixture(factory, options);
  const group = (title: string, missing: string | null, body: (test: typeof it) => void) =>
    (missing === null ? describe : describe.skip)(
      missing === null ? title : `${title} (skipped: ${missing})`,
      () => {
        afterEach(() => fixture.release());
        body(((name: string, run: () => Promise<void>) => it(name, run, options.timeout)) as typeof it);
      },
    );
  const record = conformanceRecord;
  const ids = (records: readonly { id: string }[]) => records.map((entry) => entry.id);
  const path = async (store: S, leafId?: string) =>
    ids(await store.readPath(leafId, { limit: 1_000, content: false }));

  group("storage contract: declaration", null, (test) => {
    test('declares specificationVersion "v1" and its session id', async () => {
      const store = await fixture.create();
      expect(store.specificationVersion).toBe("v1");
      expect(typeof store.sessionId).toBe("string");
    });
    for (const [capability, members] of Object.entries(optionalMembers)) {
      test(`capabilities.${capability} matches the store's ${members.join(" / ")}`, async () => {
        const store = (await fixture.create()) as unknown as Record<string, unknown>;
        const declared = options.capabilities[capability as keyof typeof optionalMembers] === true;
        for (const member of members) {
          expect(
            typeof store[member] === "function",
            `${member} ${declared ? "declared but missing" : "present but not declared (it would never be checked)"}`,
          ).toBe(declared);
        }
      });
    }
  });

  group("storage contract: records and paths", null, (test) => {
    test("an append stores a chain, each record under the one before, and the reads return it", async () => {
      const store = await fixture.create();
      const chain = [record("a", "one"), record("b", "two", "assistant"), record("c", "three")];
      expect(await store.append(chain, { parentId: undefined })).toEqual({
        status: "appended",
        parentId: null,
      });
      expect(await path(store)).toEqual(["a", "b", "c"]);
      const withContent = await store.readPath(undefined, { limit: 10, content: true });
      expect(withContent.map((entry) => [entry.id, entry.parentId, entry.role, entry.content])).toEqual(
        chain.map((entry, index) => [
          entry.id,
          index === 0 ? null : chain[index - 1]?.id,
          entry.role,
          entry.content,
        ]),
      );
      expect(withContent[0]?.createdAt).toBe(chain[0]?.createdAt);
      expect(ids(await store.readMessages(["c", "missing", "a"]))).toEqual(["c", "a"]);
      expect((await store.readMessages(["b"]))[0]?.content).toBe(chain[1]?.content);
      expect(ids(await store.readTree(10))).toEqual(["a", "b", "c"]);
      expect(ids(await store.readTree(2))).toEqual(["a", "b"]);
      expect(ids(await store.readChildren("a"))).toEqual(["b"]);
      expect(await store.readChildren("c")).toEqual([]);
    });

    test("the parent omitted is the latest leaf; null is a new root; an older parent makes a branch", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one"), record("b", "two")], { parentId: undefined });
      expect(await store.append([record("c", "three")], { parentId: undefined })).toEqual({
        status: "appended",
        parentId: "b",
      });
      expect(await store.append([record("side", "branch")], { parentId: "a" })).toEqual({
        status: "appended",
        parentId: "a",
      });
      expect(await path(store)).toEqual(["a", "side"]);
      expect(await path(store, "c")).toEqual(["a", "b", "c"]);
      expect(ids(await store.readChildren("a"))).toEqual(["b", "side"]);
      expect(await store.append([record("r", "root")], { parentId: null })).toEqual({
        status: "appended",
        parentId: null,
      });
      expect(await path(store)).toEqual(["r"]);
    });

    test("a path read keeps the records nearest the leaf within its limit, and content only when asked", async () => {
      const store = await fixture.create();
      await store.append(
        ["a", "b", "c", "d"].map((id) => record(id, `text ${id}`)),
        { parentId: undefined },
      );
      expect(ids(await store.readPath(undefined, { limit: 2, content: false }))).toEqual(["c", "d"]);
      expect(ids(await store.readPath("b", { limit: 1, content: true }))).toEqual(["b"]);
      expect(await store.readPath("unknown", { limit: 5, content: false })).toEqual([]);
      const [leaf] = await store.readPath(undefined, { limit: 1, content: true });
      expect(leaf?.content).toBe(record("d", "text d").content);
    });

    test("reads are copies: changing a returned record changes nothing stored", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one")], { parentId: undefined });
      const [read] = await store.readMessages(["a"]);
      (read as MessageRecord).content = "changed";
      (read as MessageRecord).parentId = "elsewhere";
      expect((await store.readMessages(["a"]))[0]?.content).toBe(record("a", "one").content);
      expect((await store.readMessages(["a"]))[0]?.parentId).toBeNull();
    });

    test("writes are copies: append, update and addOverlay leave what they were given as it was, and changing it afterwards changes nothing stored", async () => {
      // The message tree reads a chain's records again after append (a retry compares the first one's
      // content), and a caller may reuse its objects: a store that writes into them, or keeps them, breaks both.
      const store = await fixture.create();
      const chain = [record("a", "one"), record("b", "two")];
      const given = chain.map((entry) => ({ ...entry }));
      await store.append(given, { parentId: undefined });
      expect(given, "the records append was given, after it resolved").toEqual(chain);
      const edit = record("b", "two, edited");
      const update = { ...edit };
      await store.update(update);
      expect(update, "the record update was given, after it resolved").toEqual(edit);
      const overlay = {
        id: "o1",
        summary: "S1",
        fromMessageId: "a",
        toMessageId: "b",
        createdAt: "2026-01-01T00:00:00.000Z",
      };
      const added = { ...overlay };
      await store.addOverlay(added);
      expect(added, "the overlay addOverlay was given, after it resolved").toEqual(overlay);
      for (const entry of [...given, update]) {
        entry.content = "changed by the caller";
        entry.parentId = "elsewhere";
      }
      added.summary = "changed by the caller";
      const stored = await store.readMessages(["a", "b"]);
      expect(
        stored.map((entry) => [entry.id, entry.parentId, entry.content]),
        "the stored records after the caller changed the objects it had passed",
      ).toEqual([
        ["a", null, chain[0]?.content],
        ["b", "a", edit.content],
      ]);
      expect(await store.readOverlays(), "the stored overlays after the caller changed its object").toEqual([
        overlay,
      ]);
    });

    test("update replaces role, content and stamps and keeps the parent and time; an unknown id is false", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one"), record("b", "two")], { parentId: undefined });
      const changed = {
        ...record("b", "two, edited", "assistant"),
        parentId: null,
        createdAt: "2030-01-01T00:00:00.000Z",
      };
      expect(await store.update(changed)).toBe(true);
      const [stored] = await store.readMessages(["b"]);
      expect([stored?.role, stored?.content, stored?.parentId]).toEqual(["assistant", changed.content, "a"]);
      expect(stored?.createdAt).toBe(record("b", "").createdAt);
      expect(await store.update(record("missing", "x"))).toBe(false);
      expect(await store.readMessages(["missing"])).toEqual([]);
    });

    test("delete removes this session's ids only; a child whose parent was deleted ends its path", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one"), record("b", "two"), record("c", "three")], {
        parentId: undefined,
      });
      await store.delete(["b", "not-stored"]);
      expect(ids(await store.readMessages(["a", "b", "c"]))).toEqual(["a", "c"]);
      expect(await path(store, "c")).toEqual(["c"]);
    });

    test("overlays are stored as given, oldest first; clear removes records and overlays", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one"), record("b", "two")], { parentId: undefined });
      const first = {
        id: "o1",
        summary: "S1",
        fromMessageId: "a",
        toMessageId: "b",
        createdAt: "2026-01-01T00:00:00.000Z",
      };
      const second = { ...first, id: "o2", summary: "S2" };
      await store.addOverlay(first);
      await store.addOverlay(second);
      expect(await store.readOverlays()).toEqual([first, second]);
      // Optional: the newest overlay read alone (a retried addCompaction compares against it).
      if (typeof store.readNewestOverlay === "function") {
        expect(await store.readNewestOverlay()).toEqual(second);
      }
      await store.clear();
      expect(await store.readOverlays()).toEqual([]);
      if (typeof store.readNewestOverlay === "function") expect(await store.readNewestOverlay()).toBeNull();
      expect(await store.readTree(10)).toEqual([]);
      expect(await store.append([record("a", "again")], { parentId: undefined })).toEqual({
        status: "appended",
        parentId: null,
      });
    });
  });

  group("storage contract: conflicts (nothing stored on any)", null, (test) => {
    test("stale-leaf: the expected leaf is not the latest one", async () => {
      const store = await fixture.create();
      expect(await store.append([record("a", "one")], { parentId: undefined, expectedLeafId: null })).toEqual(
        { status: "appended", parentId: null },
      );
      expect(await store.append([record("b", "two")], { parentId: undefined, expectedLeafId: null })).toEqual(
        { status: "stale-leaf", leafId: "a" },
      );
      expect(await store.append([record("b", "two")], { parentId: "a", expectedLeafId: "x" })).toEqual({
        status: "stale-leaf",
        leafId: "a",
      });
      expect(await store.readMessages(["b"])).toEqual([]);
      expect(await store.append([record("b", "two")], { parentId: undefined, expectedLeafId: "a" })).toEqual({
        status: "appended",
        parentId: "a",
      });
      // A branch under an older message is legal while the caller knows the leaf.
      expect(await store.append([record("side", "branch")], { parentId: "a", expectedLeafId: "b" })).toEqual({
        status: "appended",
        parentId: "a",
      });
    });

    test("parent-missing: the named parent is not stored in this session", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one")], { parentId: undefined });
      expect(await store.append([record("b", "two"), record("c", "three")], { parentId: "nowhere" })).toEqual(
        { status: "parent-missing", parentId: "nowhere" },
      );
      expect(ids(await store.readTree(10))).toEqual(["a"]);
    });

    test("id-taken: the holder's session, parent and content come back, and no record of the chain is stored", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one"), record("b", "two")], { parentId: undefined });
      const result = await store.append([record("c", "three"), record("a", "one again")], {
        parentId: undefined,
      });
      expect(result.status).toBe("id-taken");
      if (result.status !== "id-taken") return;
      expect(result.index).toBe(1);
      expect([result.holder.sessionId, result.holder.parentId, result.holder.content]).toEqual([
        store.sessionId,
        null,
        record("a", "one").content,
      ]);
      expect(ids(await store.readTree(10))).toEqual(["a", "b"]);
    });

    test("still-a-parent: an id deleted without its children cannot be stored again", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one"), record("b", "two")], { parentId: undefined });
      await store.delete(["a"]);
      const result = await store.append([record("x", "new"), record("a", "back")], { parentId: null });
      expect(result).toEqual({ status: "still-a-parent", index: 1 });
      expect(ids(await store.readTree(10))).toEqual(["b"]);
    });
  });

  group("storage contract: across sessions", options.session ? null : "needs the session option", (test) => {
    test("ids are unique per database; reads, updates, deletes and overlays stay in their session", async () => {
      const one = await fixture.create();
      const two = await fixture.session(one, "conformance-other");
      await two.append([record("shared", "two's")], { parentId: undefined });
      const result = await one.append([record("shared", "one's")], { parentId: undefined });
      expect(result.status).toBe("id-taken");
      if (result.status === "id-taken") expect(result.holder.sessionId).toBe("conformance-other");
      await one.append([record("mine", "one's")], { parentId: undefined });
      expect(await one.readMessages(["shared"])).toEqual([]);
      expect(await one.update(record("shared", "overwritten"))).toBe(false);
      await one.delete(["shared"]);
      await one.addOverlay({
        id: "o",
        summary: "S",
        fromMessageId: "mine",
        toMessageId: "mine",
        createdAt: "2026-01-01T00:00:00.000Z",
      });
      expect((await two.readMessages(["shared"]))[0]?.content).toBe(record("shared", "two's").content);
      expect(await two.readOverlays()).toEqual([]);
      expect(await path(two)).toEqual(["shared"]);
      await one.clear();
      expect(await path(two)).toEqual(["shared"]);
    });

    test("two writers append one id into two sessions at once: exactly one stores it", async () => {
      const one = await fixture.create();
      const two = await fixture.session(one, "conformance-other");
      const results = await Promise.all([
        one.append([record("race", "from one")], { parentId: undefined }),
        two.append([record("race", "from two")], { parentId: undefined }),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual(["appended", "id-taken"]);
    });
  });

  group("storage contract: two writers", null, (test) => {
    const count = options.concurrentAppends ?? 8;
    test(`${count} appends under the latest leaf at once form one chain (no fork)`, async () => {
      const store = await fixture.create();
      await store.append([record("root", "start")], { parentId: undefined });
      const results = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          store.append([record(`w${index}`, `writer ${index}`)], { parentId: undefined }),
        ),
      );
      expect(results.every((result) => result.status === "appended")).toBe(true);
      const tree = await store.readTree(count + 1);
      const parents = tree.map((entry) => entry.parentId);
      expect(new Set(parents).size, "two records share a parent: the writers forked the conversation").toBe(
        parents.length,
      );
      expect(await path(store)).toHaveLength(count + 1);
    });

    test(`${count} overlays and ${count} updates at once: every overlay is kept, every record holds its update`, async () => {
      const store = await fixture.create();
      const chain = Array.from({ length: count }, (_, index) => record(`m${index}`, `text ${index}`));
      await store.append(chain, { parentId: undefined });
      const overlay = (index: number) => ({
        id: `o${index}`,
        summary: `summary ${index}`,
        fromMessageId: "m0",
        toMessageId: `m${index}`,
        createdAt: "2026-01-01T00:00:00.000Z",
      });
      const updated = await Promise.all([
        ...Array.from({ length: count }, (_, index) => store.addOverlay(overlay(index)).then(() => true)),
        ...chain.map((entry, index) => store.update(record(entry.id, `edited ${index}`, "assistant"))),
      ]);
      expect(updated.every(Boolean)).toBe(true);
      expect((await store.readOverlays()).map((entry) => entry.id).sort()).toEqual(
        Array.from({ length: count }, (_, index) => `o${index}`).sort(),
      );
      const read = await store.readMessages(chain.map((entry) => entry.id));
      expect(read.map((entry) => entry.content)).toEqual(
        chain.map((entry, index) => record(entry.id, `edited ${index}`, "assistant").content),
      );
    });

    test(`${count} appends expecting the same leaf at once: exactly one is stored, the rest are stale`, async () => {
      const store = await fixture.create();
      await store.append([record("root", "start")], { parentId: undefined });
      const results = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          store.append([record(`t${index}`, `turn ${index}`), record(`t${index}-answer`, "answer")], {
            parentId: "root",
            expectedLeafId: "root",
          }),
        ),
      );
      expect(results.filter((result) => result.status === "appended")).toHaveLength(1);
      expect(results.filter((result) => result.status === "stale-leaf")).toHaveLength(count - 1);
      expect(await store.readTree(100)).toHaveLength(3);
    });
  });

  group("storage contract: durability", options.reopen ? null : "needs the reopen option", (test) => {
    test("a reopened store reads what was written, with the same parents and content", async () => {
      const store = await fixture.create();
      await store.append([record("a", "one"), record("b", "two")], { parentId: undefined });
      await store.addOverlay({
        id: "o",
        summary: "S",
        fromMessageId: "a",
        toMessageId: "b",
        createdAt: "2026-01-01T00:00:00.000Z",
      });
      const again = await fixture.reopen(store);
      expect(await again.readPath(undefined, { limit: 10, content: true })).toEqual(
        await store.readPath(undefined, { limit: 10, content: true }),
      );
      expect(await again.readOverlays()).toEqual(await store.readOverlays());
    });
  });

  group(
    "storage contract: search",
    options.capabilities.search ? null : "capabilities.search not declared",
    (test) => {
      test("finds this session's records by the words of their text, at most limit", async () => {
        const store = await fixture.create();
        // Three roots: a store may also find a record through the turns around it on its branch (its search
        // context, as the session suite allows); a root alone has none, so only the words of its text count.
        for (const [id, text] of [
          ["a", "the tide comes in"],
          ["b", "nothing here"],
          ["c", "low tide at noon"],
        ] as const) {
          await store.append([record(id, text)], { parentId: null });
        }
        const search = store.search as NonNullable<SessionStoreV1["search"]>;
        const hits = await search.call(store, "tide", 10);
        // The records whose text has the word come first. A store may rank others after them, found through
        // the turns around them (SQLite's contextual search does), as the message tree's search group allows.
        expect(ids(hits).slice(0, 2).sort()).toEqual(["a", "c"]);
        expect(hits.find((hit) => hit.id === "c")?.text).toBe("low tide at noon");
        expect(await search.call(store, "tide", 1)).toHaveLength(1);
        expect(await search.call(store, "absent", 10)).toEqual([]);
        await store.delete(["a"]);
        const after = ids(await search.call(store, "tide", 10));
        expect(after[0]).toBe("c");
        expect(after).not.toContain("a");
      });
    },
  );

  group(
    "storage contract: path totals",
    options.capabilities.pathTotals ? null : "capabilities.pathTotals not declared",
    (test) => {
      test("a path's length and summed stamps, as a path read gives them, or null; through branches, updates and deletes", async () => {
        const store = await fixture.create();
        const totals = (leafId?: string) =>
          (store.readPathTotals as NonNullable<SessionStoreV1["readPathTotals"]>).call(store, leafId);
        /** The totals must be null or what the records of the path say. */
        const expectTotals = async (leafId?: string) => {
          const path = await store.readPath(leafId, { limit: 1_000, content: false });
          const kept = await totals(leafId);
          if (kept === null) return;
          expect(kept).toEqual({
            length: path.length,
            tokens: path.reduce((sum, entry) => sum + (entry.tokens ?? 0), 0),
          });
        };
        expect(await totals()).toEqual({ length: 0, tokens: 0 });
        await store.append([record("a", "one"), record("b", "two two"), record("c", "three three three")], {
          parentId: undefined,
        });
        const stamps = ["one", "two two", "three three three"].map((text, index) =>
          record(String(index), text),
        );
        expect(await totals()).toEqual({
          length: 3,
          tokens: stamps.reduce((sum, entry) => sum + (entry.tokens ?? 0), 0),
        });
        await store.append([record("side", "a branch")], { parentId: "a" });
        await expectTotals();
        await expectTotals("c");
        expect(await totals("unknown")).toEqual({ length: 0, tokens: 0 });
        await store.update(record("b", "two, now with many more words than before"));
        await expectTotals("c");
        await store.append([record("d", "four")], { parentId: "c" });
        await expectTotals("d");
        await store.delete(["b"]);
        await expectTotals("d");
        await store.append([record("e", "five")], { parentId: "d" });
        await expectTotals("e");
        await store.clear();
        expect(await totals()).toEqual({ length: 0, tokens: 0 });
      });
    },
  );

  group(
    "storage contract: calibration",
    options.capabilities.calibration ? null : "capabilities.calibration not declared",
    (test) => {
      test("keeps one number per session, and clear forgets it", async () => {
        const store = await fixture.create();
        const read = store.readCalibration as NonNullable<SessionStoreV1["readCalibration"]>;
        const write = store.writeCalibration as NonNullable<SessionStoreV1["writeCalibration"]>;
        expect(await read.call(store)).toBeNull();
        await write.call(store, 1.25);
        expect(await read.call(store)).toBe(1.25);
        await store.clear();
        expect(await read.call(store)).toBeNull();
      });
    },
  );
}
