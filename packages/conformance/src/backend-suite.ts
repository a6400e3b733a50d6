import { Session, type SessionBackend, SessionManager } from "@contextblocks/sessions";
import { expect } from "vitest";
import { type ContractSuiteOptions, contractSuite } from "./contract-suite.js";
import { describeSessionRegistry } from "./registry-suite.js";
import { describeRunStateStore } from "./run-state-suite.js";

const text = (id: string, body: string, role = "user") => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});

/**
 * A whole backend (`SessionBackend`, what `Session.create(backend)` and `SessionManager` need): its registry
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
        Session.create(backend)
          .forSession("chat")
          .withContext("memory", { maxTokens: 500 })
          .withCachedPrompt();
      const first = open();
      await first.appendMessages([text("u1", "hello"), text("a1", "hi there", "assistant")]);
      await first.replaceContextBlock("memory", "The user likes tea.");
      const prompt = await first.freezeSystemPrompt();
      expect(prompt).toContain("The user likes tea.");
      await first.replaceContextBlock("memory", "Written after the freeze.");
      const second = open();
      expect((await second.getHistory()).map((message) => message.id)).toEqual(["u1", "a1"]);
      expect(await second.freezeSystemPrompt()).toBe(prompt);
      await second.context.load();
      expect(second.getContextBlock("memory")?.content).toBe("Written after the freeze.");
    });

    test("sessions keep their messages, blocks and prompts apart", async (create) => {
      const backend = await create();
      const one = Session.create(backend).forSession("one").withContext("memory").withCachedPrompt();
      const two = Session.create(backend).forSession("two").withContext("memory").withCachedPrompt();
      await one.appendMessage(text("m1", "one's message"));
      await one.replaceContextBlock("memory", "one's memory");
      await two.replaceContextBlock("memory", "two's memory");
      expect(await two.getHistory()).toEqual([]);
      expect(await one.freezeSystemPrompt()).not.toContain("two's memory");
      expect(await two.freezeSystemPrompt()).toContain("two's memory");
    });

    test("deleteSession leaves nothing of the session: messages, blocks, prompt, run state, registry row", async (create) => {
      const backend = await create();
      const manager = new SessionManager(backend).withContext("memory").withCachedPrompt();
      const doomed = await manager.create("Doomed");
      const kept = await manager.create("Kept");
      for (const info of [doomed, kept]) {
        await manager.append(info.id, text(`${info.id}-m`, `a message of ${info.name} about kites`));
        const session = manager.getSession(info.id);
        await session.replaceContextBlock("memory", `${info.name} remembers kites`);
        await session.freezeSystemPrompt();
        await backend.runState.save(info.id, { plugin: { name: info.name } });
      }
      await manager.delete(doomed.id);
      expect(await backend.registry.get(doomed.id)).toBeNull();
      expect(await backend.runState.load(doomed.id)).toBeNull();
      const reopened = Session.create(backend).forSession(doomed.id).withContext("memory").withCachedPrompt();
      expect(await reopened.getHistory()).toEqual([]);
      expect(await reopened.freezeSystemPrompt()).not.toContain("Doomed remembers");
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
        await Session.create(backend).forSession("a").appendMessage(text("x1", "the harbour at dawn"));
        await Session.create(backend).forSession("b").appendMessage(text("y1", "a harbour at dusk"));
        await Session.create(backend).forSession("b").appendMessage(text("y2", "nothing relevant"));
        const hits = (await backend.searchMessages("harbour", 10)).map((hit) => `${hit.sessionId}:${hit.id}`);
        expect(hits).toEqual(expect.arrayContaining(["a:x1", "b:y1"]));
        // A store may return a neighbour of a hit as well; every hit names the session that holds it.
        expect(hits.every((hit) => ["a:x1", "b:y1", "b:y2"].includes(hit))).toBe(true);
      });
    }
  });
}
