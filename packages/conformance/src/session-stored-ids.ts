import { expect } from "vitest";
import type { ConformanceMessage, SessionStoreUnderTest } from "./session-options.js";
import { idsOf, type SessionSuite, sessionGroup, textMessage } from "./session-suite.js";

/**
 * What an append does with an id that is already stored, the same on every store: ids are unique across the
 * sessions of one store (as `assistant_messages.id` is the primary key in Cloudflare agents' Sessions API).
 * An identical retry (same session, id, parent and content: an append whose write landed but whose answer
 * was lost) succeeds without a second row; any other append of a stored id is refused with `INVALID_INPUT`
 * naming the id (never another session that holds it: ids may come from a client), and changes nothing.
 */
export function sessionStoredIdsGroup<P extends SessionStoreUnderTest>(suite: SessionSuite<P>): void {
  sessionGroup("stored ids", suite, null, (fixture, test) => {
    test("an identical retry (same id, parent and content) succeeds and stores no second row", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "hello"));
      await store.appendMessage(textMessage("b", "next", "assistant"));
      const before = await snapshot(store, ["a", "b"]);
      // Under the latest leaf (the parent omitted, as the first attempt was), and under its stored parent.
      placedUnder(await store.appendMessage(textMessage("b", "next", "assistant")), "a");
      placedUnder(await store.appendMessage(textMessage("b", "next", "assistant"), "a"), "a");
      placedUnder(await store.appendMessage(textMessage("a", "hello"), null), null);
      expect(await snapshot(store, ["a", "b"])).toEqual(before);
      await store.appendMessage(textMessage("c", "after the retries"));
      expect(idsOf(await store.getHistory())).toEqual(["a", "b", "c"]);
      // A retry of an older message moves no leaf.
      await store.appendMessage(textMessage("b", "next", "assistant"), "a");
      expect((await store.getLatestLeaf())?.id).toBe("c");
    });

    test("an id stored in this session with other content is refused (INVALID_INPUT naming it); nothing changes", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "original"));
      await store.appendMessage(textMessage("b", "next"));
      const before = await snapshot(store, ["a", "b"]);
      await refused(() => store.appendMessage(textMessage("a", "other text")), "a");
      await refused(() => store.appendMessage(textMessage("a", "original", "assistant"), null), "a");
      await refused(() => store.appendMessage(textMessage("b", "other text"), "a"), "b");
      expect(await snapshot(store, ["a", "b"])).toEqual(before);
    });

    test("a retry under another parent is refused (INVALID_INPUT naming the id); nothing changes", async () => {
      const store = await fixture.create();
      await store.appendMessage(textMessage("a", "one"));
      await store.appendMessage(textMessage("b", "two"));
      await store.appendMessage(textMessage("r", "another root"), null);
      const before = await snapshot(store, ["a", "b", "r"]);
      await refused(() => store.appendMessage(textMessage("b", "two"), "r"), "b");
      await refused(() => store.appendMessage(textMessage("b", "two"), null), "b");
      await refused(() => store.appendMessage(textMessage("a", "one"), "r"), "a");
      expect(await snapshot(store, ["a", "b", "r"])).toEqual(before);
    });
  });

  sessionGroup(
    "stored ids across sessions",
    suite,
    suite.options.session ? null : "needs the session option",
    (fixture, test) => {
      test("an id stored in another session is refused, even with the same content, naming the id but not that session; neither session changes", async () => {
        const one = await fixture.create();
        const two = await fixture.session(one, "other-session");
        await two.appendMessage(textMessage("shared", "held by the other session"));
        await one.appendMessage(textMessage("mine", "one's own"));
        const [oneBefore, twoBefore] = [await snapshot(one, ["mine"]), await snapshot(two, ["shared"])];
        for (const parentId of [undefined, null, "mine"]) {
          const error = await refused(
            () => one.appendMessage(textMessage("shared", "held by the other session"), parentId),
            "shared",
          );
          // Ids may come from a client: the refusal must not tell it which other sessions exist.
          expect(error.message, "the refusal does not name the other session").not.toContain("other-session");
        }
        expect(await one.getMessage("shared")).toBeNull();
        expect(await snapshot(one, ["mine"])).toEqual(oneBefore);
        expect(await snapshot(two, ["shared"])).toEqual(twoBefore);
        // The id still belongs to the other session only: there a retry succeeds.
        await two.appendMessage(textMessage("shared", "held by the other session"));
        expect(idsOf(await two.getHistory())).toEqual(["shared"]);
      });
    },
  );
}

/** Runs an append that must be refused with `INVALID_INPUT` naming `id`; returns the error. */
async function refused(run: () => unknown, id: string): Promise<{ code?: unknown; message: string }> {
  const error: unknown = await Promise.resolve()
    .then(run)
    .then(
      () => null,
      (caught: unknown) => caught,
    );
  expect(error, `an append of the stored id "${id}" was not refused`).not.toBeNull();
  const { code, message } = error as { code?: unknown; message?: unknown };
  expect(code, `the refusal's code (${String(message)})`).toBe("INVALID_INPUT");
  expect(String(message)).toContain(`"${id}"`);
  return { code, message: String(message) };
}

/** Where a store that reports an append's place (`{ parentId }`) put a retried message: its stored parent. */
function placedUnder(appended: unknown, parentId: string | null): void {
  if (typeof appended === "object" && appended !== null && "parentId" in appended) {
    expect((appended as { parentId: unknown }).parentId).toBe(parentId);
  }
}

/** What a refused or retried append must leave as it was: the tree, the leaf and the messages. */
async function snapshot(store: SessionStoreUnderTest, ids: readonly string[]): Promise<unknown> {
  const messages: (ConformanceMessage | null)[] = [];
  for (const id of ids) messages.push(await store.getMessage(id));
  return {
    tree: store.getTree ? (await store.getTree()).map((node) => [node.id, node.parentId]) : null,
    branches: await Promise.all(ids.map(async (id) => idsOf(await store.getBranches(id)))),
    leaf: (await store.getLatestLeaf())?.id ?? null,
    history: idsOf(await store.getHistory()),
    messages,
  };
}
