import { type SessionBackend, SessionBuilder, SessionManager } from "@contextblocks/sessions";
import { expect } from "vitest";
import { type ContractSuiteOptions, contractSuite } from "./contract-suite.js";
import { HOSTILE_QUERIES } from "./hostile-queries.js";
import { describeSessionRegistry } from "./registry-suite.js";
import { describeRunStateStore } from "./run-state-suite.js";

const text = (id: string, body: string, role = "user") => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});

/**
 * A whole backend (`SessionBackend`, what `new SessionBuilder(backend)` and `SessionManager` need): its registry
 * and run state by their own suites, then the parts together: messages, blocks and the frozen prompt kept
 * per session and across a new `Session` on the same database, search across sessions, and `deleteSession`
 * leaving nothing of the session behind. The factory returns a backend on a fresh, empty database. The
 * backend's message store is proven by `describeSessionStoreV1` (or `describeSessionStore`) on its own.
 */
export function describeSessionBackend<B extends SessionBackend>(
  name: string,
  factory: () => B | Promise<B>,
  options: ContractSuiteOptions<B> & { search?: boolean } = {},
): void {
  const suiteOptions: ContractSuiteOptions<B> = {};
  if (options.cleanup) suiteOptions.cleanup = options.cleanup;
  if (options.timeout !== undefined) suiteOptions.timeout = options.timeout;
  const made = new WeakMap<object, B>();
  const part =
    <T>(pick: (backend: B) => T) =>
    async (): Promise<T> => {
      const backend = await factory();
      const value = pick(backend);
      made.set(value as object, backend);
      return value;
    };
  const release = async (value: object) => {
    const backend = made.get(value);
    if (backend !== undefined) await options.cleanup?.(backend);
  };
  describeSessionRegistry(
    name,
    part((backend) => backend.registry),
    { ...suiteOptions, cleanup: release },
  );
  describeRunStateStore(
    name,
    part((backend) => backend.runState),
    { ...suiteOptions, cleanup: release },
  );

  contractSuite(`${name}: session backend`, factory, suiteOptions, (test) => {
    test("has every part, named", async (create) => {
      const backend = await create();
      expect(typeof backend.name).toBe("string");
      for (const method of ["messages", "block", "prompt", "searchMessages", "deleteSession"] as const) {
        expect(typeof backend[method], method).toBe("function");
      }
      expect(typeof backend.registry.create).toBe("function");
      expect(typeof backend.runState.load).toBe("function");
    });

    test("a new Session on the same backend reads the messages, blocks and frozen prompt of the last", async (create) => {
      const backend = await create();
      const open = () =>
        new SessionBuilder(backend)
          .forSession("chat")
          .withContext("memory", { maxTokens: 500 })
          .withCachedPrompt()
          .build();
      const first = open();
      await first.appendMessages([text("u1", "hello"), text("a1", "hi there", "assistant")]);
      await first.context.setBlock("memory", "The user likes tea.");
      const prompt = await first.context.freezeSystemPrompt();
      expect(prompt).toContain("The user likes tea.");
      await first.context.setBlock("memory", "Written after the freeze.");
      const second = open();
      expect((await second.getHistory()).map((message) => message.id)).toEqual(["u1", "a1"]);
      expect(await second.context.freezeSystemPrompt()).toBe(prompt);
      await second.context.load();
      expect(second.context.getBlock("memory")?.content).toBe("Written after the freeze.");
    });

    test("sessions keep their messages, blocks and prompts apart", async (create) => {
      const backend = await create();
      const one = new SessionBuilder(backend)
        .forSession("one")
        .withContext("memory")
        .withCachedPrompt()
        .build();
      const two = new SessionBuilder(backend)
        .forSession("two")
        .withContext("memory")
        .withCachedPrompt()
        .build();
      await one.appendMessage(text("m1", "one's message"));
      await one.context.setBlock("memory", "one's memory");
      await two.context.setBlock("memory", "two's memory");
      expect(await two.getHistory()).toEqual([]);
      expect(await one.context.freezeSystemPrompt()).not.toContain("two's memory");
      expect(await two.context.freezeSystemPrompt()).toContain("two's memory");
    });

    test("deleteSession leaves nothing of the session: messages, blocks, prompt, run state, registry row", async (create) => {
      const backend = await create();
      const manager = new SessionManager(
        new SessionBuilder(backend).withContext("memory").withCachedPrompt(),
      );
      const doomed = await manager.create("Doomed");
      const kept = await manager.create("Kept");
      for (const info of [doomed, kept]) {
        await manager
          .getSession(info.id)
          .appendMessage(text(`${info.id}-m`, `a message of ${info.name} about kites`));
        const session = manager.getSession(info.id);
        await session.context.setBlock("memory", `${info.name} remembers kites`);
        await session.context.freezeSystemPrompt();
        await backend.runState.save(info.id, { plugin: { name: info.name } });
      }
      await manager.delete(doomed.id);
      expect(await backend.registry.get(doomed.id)).toBeNull();
      expect(await backend.runState.load(doomed.id)).toBeNull();
      const reopened = new SessionBuilder(backend)
        .forSession(doomed.id)
        .withContext("memory")
        .withCachedPrompt()
        .build();
      expect(await reopened.getHistory()).toEqual([]);
      expect(await reopened.context.freezeSystemPrompt()).not.toContain("Doomed remembers");
      const survivor = manager.getSession(kept.id);
      expect((await survivor.getHistory()).length).toBe(1);
      expect(await backend.runState.load(kept.id)).toEqual({ plugin: { name: "Kept" } });
      if (options.search !== false) {
        const hits = await backend.searchMessages("kites", 10);
        expect(hits.length).toBeGreaterThan(0);
        expect(hits.every((hit) => hit.sessionId === kept.id)).toBe(true);
      }
    });

    if (options.search !== false) {
      test("searchMessages finds messages of every session, each hit naming its session", async (create) => {
        const backend = await create();
        await new SessionBuilder(backend)
          .forSession("a")
          .build()
          .appendMessage(text("x1", "the harbour at dawn"));
        await new SessionBuilder(backend)
          .forSession("b")
          .build()
          .appendMessage(text("y1", "a harbour at dusk"));
        await new SessionBuilder(backend)
          .forSession("b")
          .build()
          .appendMessage(text("y2", "nothing relevant"));
        const hits = (await backend.searchMessages("harbour", 10)).map((hit) => `${hit.sessionId}:${hit.id}`);
        expect(hits).toEqual(expect.arrayContaining(["a:x1", "b:y1"]));
        // A store may return a neighbour of a hit as well; every hit names the session that holds it.
        expect(hits.every((hit) => ["a:x1", "b:y1", "b:y2"].includes(hit))).toBe(true);
      });

      test("searchMessagesSync, where the backend has it, answers at once with searchMessages' hits", async (create, skip) => {
        const backend = await create();
        const searchAtOnce = backend.searchMessagesSync;
        if (searchAtOnce === undefined)
          return skip("the backend does not search at once (no `searchMessagesSync`)");
        const session = new SessionBuilder(backend).forSession("a").build();
        await session.appendMessage(text("x1", "the harbour at dawn"));
        await session.appendMessage(text("x2", "gulls over the harbour wall"));
        // Appended since the last search, and found by a search that answers at once.
        const atOnce = searchAtOnce.call(backend, "harbour", 10);
        expect(Array.isArray(atOnce)).toBe(true);
        expect(atOnce.map((hit) => hit.id).sort()).toEqual(["x1", "x2"]);
        expect(atOnce).toEqual(await backend.searchMessages("harbour", 10));
        // Queries engines read as syntax, or choke on: read as words, the same hits both ways, nothing thrown.
        for (const { query } of HOSTILE_QUERIES) {
          expect(searchAtOnce.call(backend, query, 10)).toEqual(await backend.searchMessages(query, 10));
        }
        expect(() => searchAtOnce.call(backend, 42 as unknown as string, 10)).toThrow();
      });
    }
  });
}
