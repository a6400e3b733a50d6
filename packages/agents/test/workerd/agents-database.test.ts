import { env, runInDurableObject } from "cloudflare:test";
import {
  AgentSearchProvider,
  AgentSessionProvider,
  Session,
} from "@contextblocks/agents/experimental/memory/session";
import {
  AgentSearchProvider as AgentsSearchProvider,
  Session as AgentsSession,
} from "agents-session/experimental/memory/session";
import { describe, expect, it } from "vitest";

const say = (id: string, role: "user" | "assistant", text: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text }],
});
const soul = { get: async () => "You are the harbour master's assistant." };
const shape = (messages: { id: string; role: string; parts: unknown }[]) =>
  messages.map(({ id, role, parts }) => ({ id, role, parts }));

describe("a Durable Object database agents@0.22.0 wrote", () => {
  it("reads blocks, the frozen prompt, messages (updated too), overlays and search, then appends and searches", async () => {
    await runInDurableObject(env.AGENT_OBJECT.getByName("harbour"), async (agent, state) => {
      // Written by the real agents@0.22.0 Sessions API on this object's SQLite storage.
      const agents = AgentsSession.create(agent)
        .forSession("chat-1")
        .withContext("soul", { provider: soul })
        .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
        .withCachedPrompt();
      await agents.replaceContextBlock("memory", "The ferry leaves at nine.");
      const prompt = await agents.freezeSystemPrompt();
      await agents.appendMessage(say("m1", "user", "When does the ferry leave?"));
      await agents.appendMessage(say("m2", "assistant", "At nine, from pier four."));
      await agents.appendMessage(say("m3", "user", "And the lighthouse tour?"));
      await agents.appendMessage(say("m4", "assistant", "The lighthouse tour starts at noon."));
      await agents.updateMessage(say("m2", "assistant", "At nine sharp, from pier four."));
      await agents.addCompaction("The user asked about the ferry (nine, pier four).", "m1", "m2");
      const written = await agents.getHistory();
      const notes = new AgentsSearchProvider(agent);
      notes.init("notes");
      await notes.set("tides", "High tide is at six in the evening.");

      // Read with contextblocks, from ctx.storage (as `Session.create(this.ctx.storage)` in an Agent).
      const session = Session.create(state.storage)
        .forSession("chat-1")
        .withContext("soul", { provider: soul })
        .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
        .withCachedPrompt();
      expect(await session.freezeSystemPrompt()).toBe(prompt);
      await session.context.load();
      expect(session.getContextBlock("memory")?.content).toBe("The ferry leaves at nine.");
      expect(shape(await session.getHistory())).toEqual(shape(written));
      expect((await session.getMessage("m2"))?.parts).toEqual([
        { type: "text", text: "At nine sharp, from pier four." },
      ]);
      expect((await session.getCompactions()).map((c) => [c.fromMessageId, c.toMessageId])).toEqual([
        ["m1", "m2"],
      ]);
      expect((await session.search("lighthouse")).map((hit) => hit.id)).toContain("m3");

      await session.appendMessage(say("m5", "user", "Is the chandlery open on Sunday?"));
      expect((await session.getHistory()).at(-1)?.id).toBe("m5");
      expect((await session.search("chandlery")).map((hit) => hit.id)).toEqual(["m5"]);
      // Search entries agents indexed, through a search block.
      const withNotes = Session.create(state.storage)
        .forSession("chat-1")
        .withContext("notes", { provider: new AgentSearchProvider(state.storage) });
      const tools = await withNotes.tools();
      const search = tools.search_context as unknown as {
        execute(input: unknown, options: unknown): Promise<string>;
      };
      expect(
        await search.execute({ label: "notes", query: "high tide" }, { toolCallId: "t", messages: [] }),
      ).toContain("six in the evening");

      // agents still reads what contextblocks appended.
      const back = AgentsSession.create(agent).forSession("chat-1");
      expect((await back.getHistory()).map((m) => m.id)).toContain("m5");
    });
  });
});

describe("a new Durable Object database the compatibility entry wrote first", () => {
  it("agents@0.22.0 reads it and appends to it, then contextblocks reads on (an agent moved back)", async () => {
    await runInDurableObject(env.AGENT_OBJECT.getByName("moved-back"), async (agent, state) => {
      const session = Session.create(state.storage).forSession("chat-1");
      await session.appendMessage(say("m1", "user", "When does the ferry leave?"));
      await session.appendMessage(say("m2", "assistant", "At nine, from pier four."));
      // The lean layout: agents@0.22.0 orders by rowid, which the keyed layout has not.
      const back = AgentsSession.create(agent).forSession("chat-1");
      expect((await back.getLatestLeaf())?.id).toBe("m2");
      await back.appendMessage(say("m3", "user", "And on Sunday?"));
      expect((await back.getHistory()).map((m) => m.id)).toEqual(["m1", "m2", "m3"]);
      expect((await session.getHistory()).map((m) => m.id)).toEqual(["m1", "m2", "m3"]);
      // The store alone, as agents' `new AgentSessionProvider(this)`, gives a new database the same layout.
      const store = new AgentSessionProvider(state.storage, "other");
      await store.appendMessage(say("o1", "user", "A second session."));
      const columns = state.storage.sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('assistant_messages')")
        .toArray()
        .map((row) => row.name);
      expect(columns).not.toContain("seq");
    });
  });

  it("AgentSessionProvider alone on a new database takes the lean layout too", async () => {
    await runInDurableObject(env.AGENT_OBJECT.getByName("store-alone"), async (agent, state) => {
      const store = new AgentSessionProvider(state.storage, "chat-1");
      await store.appendMessage(say("m1", "user", "Hello."));
      const back = AgentsSession.create(agent).forSession("chat-1");
      expect((await back.getLatestLeaf())?.id).toBe("m1");
    });
  });
});
