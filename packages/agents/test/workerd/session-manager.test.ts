import { env, runInDurableObject } from "cloudflare:test";
import { SessionManager } from "@contextblocks/agents/experimental/memory/session";
import { describe, expect, it } from "vitest";

const say = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text" as const, text }] });

describe("the compatibility SessionManager on a Durable Object", () => {
  it("answers create, get, list, rename and addUsage at once, as agents' does, on an Agent and on ctx.storage", async () => {
    await runInDurableObject(env.AGENT_OBJECT.getByName("manager"), async (instance, state) => {
      // A new database: the first create makes the registry's table in the same synchronous run.
      const manager = new SessionManager(instance);
      const first = manager.create("Support chat", { model: "m" });
      const second = manager.create("Billing");
      expect(first).toMatchObject({ name: "Support chat", model: "m", input_tokens: 0 });
      expect(manager.get(first.id)?.name).toBe("Support chat");
      expect(manager.list().map((info) => info.id)).toEqual([second.id, first.id]);
      manager.rename(first.id, "Support");
      manager.addUsage(first.id, 120, 30, 0.002);
      expect(manager.list()[0]).toMatchObject({ id: first.id, name: "Support", input_tokens: 120 });

      // The same rows through the storage itself, and a write through a session moves its row up.
      const fromStorage = new SessionManager(state.storage);
      expect(fromStorage.get(first.id)).toEqual(manager.get(first.id));
      await fromStorage.getSession(second.id).appendMessage({
        id: "m1",
        role: "user",
        parts: [{ type: "text", text: "Where is my invoice?" }],
      });
      expect(manager.list().map((info) => info.id)).toEqual([second.id, first.id]);
      expect(() => manager.rename("unknown", "x")).toThrow(expect.objectContaining({ code: "NOT_FOUND" }));
      expect(manager.list()).toHaveLength(2);
    });
  });

  it("answers search at once, as agents' does, the messages appended since the last search included", async () => {
    await runInDurableObject(env.AGENT_OBJECT.getByName("search-at-once"), async (instance, state) => {
      // agents' own check (testManagerSearch), on the Agent, then on its ctx.storage.
      const manager = SessionManager.create(instance);
      const first = manager.create("Chat1");
      const second = manager.create("Chat2");
      await manager.getSession(first.id).appendMessage(say("ms1", "I love TypeScript"));
      await manager.getSession(second.id).appendMessage(say("ms2", "Python is great"));
      const results = manager.search("TypeScript");
      expect(Array.isArray(results)).toBe(true);
      expect(results.map((hit) => [hit.id, hit.sessionId])).toEqual([["ms1", first.id]]);

      const fromStorage = new SessionManager(state.storage);
      await fromStorage.getSession(second.id).appendMessage(say("ms3", "TypeScript types Python too"));
      expect(
        fromStorage
          .search("TypeScript")
          .map((hit) => hit.id)
          .sort(),
      ).toEqual(["ms1", "ms3"]);
      expect(manager.search("python types").map((hit) => hit.id)[0]).toBe("ms3");
      expect(() => manager.search(7 as unknown as string)).toThrow(
        expect.objectContaining({ code: "INVALID_INPUT" }),
      );
    });
  });

  it("lists the session written last first when the Agent and its ctx.storage both write in one request", async () => {
    await runInDurableObject(env.AGENT_OBJECT.getByName("two-clients"), async (instance, state) => {
      // Two clients of one database; Date.now() stands still while the request's code runs.
      const onAgent = new SessionManager(instance);
      const onStorage = new SessionManager(state.storage);
      const bulk = Array.from({ length: 20 }, (_, index) => onAgent.create(`bulk ${index}`));
      const last = onStorage.create("written last");
      // Each client stepped its own clock: "written last" listed below all twenty.
      expect(onAgent.list({ limit: 2 }).map((info) => info.id)).toEqual([last.id, bulk[19]?.id]);
      onAgent.rename(bulk[0]?.id ?? "", "renamed last");
      expect(onStorage.list({ limit: 2 }).map((info) => info.id)).toEqual([bulk[0]?.id, last.id]);
    });
  });
});
