import { SessionManager as BaseSessionManager, SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import type { SessionRegistry } from "@contextblocks/sessions/store-kit";
import { sqliteBackend } from "@contextblocks/sqlite";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { Session as AgentsSession } from "agents-session/experimental/memory/session";
import { afterEach, describe, expect, it } from "vitest";
import {
  AgentSessionProvider,
  agentsSqliteBackend,
  NO_COMPACTION_MESSAGE,
  Session,
  SessionManager,
} from "../../src/index.js";

const text = (id: string, role: "user" | "assistant", body: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text: body }],
});
const soul = { get: async () => "You are the harbour master's assistant." };

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

/** A named session written by the real agents@0.22.0: blocks, frozen prompt, messages, an update, an overlay. */
async function writtenByAgents(database: TemporaryDatabase["database"], sessionId: string) {
  const agents = AgentsSession.create(agentsHost(database))
    .forSession(sessionId)
    .withContext("soul", { provider: soul })
    .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
    .withCachedPrompt();
  await agents.replaceContextBlock("memory", "The ferry leaves at nine.");
  const prompt = await agents.freezeSystemPrompt();
  await agents.appendMessage(text("m1", "user", "When does the ferry leave?"));
  await agents.appendMessage(text("m2", "assistant", "At nine, from pier four."));
  await agents.appendMessage(text("m3", "user", "And the lighthouse tour?"));
  await agents.appendMessage(text("m4", "assistant", "The lighthouse tour starts at noon."));
  await agents.updateMessage(text("m2", "assistant", "At nine sharp, from pier four."));
  await agents.addCompaction("The user asked about the ferry (nine, pier four).", "m1", "m2");
  return { prompt, history: await agents.getHistory() };
}

describe.each(["chat-1", "support/2024 ü"])("a database agents@0.22.0 wrote, session %j", (sessionId) => {
  it("reads blocks, the frozen prompt, messages, overlays and search; appends and searches after", async () => {
    temporary = openTemporaryDatabase();
    const written = await writtenByAgents(temporary.database, sessionId);

    const session = Session.create(temporary.database)
      .forSession(sessionId)
      .withContext("soul", { provider: soul })
      .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
      .withCachedPrompt();
    // The frozen prompt agents stored is served as it is (the provider's prefix cache stays warm).
    expect(await session.freezeSystemPrompt()).toBe(written.prompt);
    await session.context.load();
    expect(session.getContextBlock("memory")?.content).toBe("The ferry leaves at nine.");
    // Messages (the updated one too) and the compaction overlay read as agents reads them.
    // (The overlay message also carries `metadata.compaction`, and its `createdAt` is the stored string.)
    const shape = (messages: { id: string; role: string; parts: unknown }[]) =>
      messages.map(({ id, role, parts }) => ({ id, role, parts }));
    expect(shape(await session.getHistory())).toEqual(shape(written.history));
    expect(written.history.map((message) => message.id).slice(1)).toEqual(["m3", "m4"]);
    expect((await session.getMessage("m2"))?.parts).toEqual([
      { type: "text", text: "At nine sharp, from pier four." },
    ]);
    expect(await session.getCompactions()).toHaveLength(1);
    expect((await session.search("lighthouse")).map((hit) => hit.id)).toContain("m4");

    // Appends, writes and searches after the switch.
    await session.appendMessage(text("m5", "user", "Is the lighthouse café open?"));
    await session.appendMessage(text("m6", "assistant", "The café closes at four."));
    await session.replaceContextBlock("memory", "The ferry leaves at nine. The café closes at four.");
    expect((await session.search("café")).map((hit) => hit.id).sort()).toEqual(["m5", "m6"]);
    expect((await session.getHistory()).map((message) => message.id).slice(-2)).toEqual(["m5", "m6"]);

    // Written back in agents' form: agents reads the new messages and the new block content.
    const agentsAgain = AgentsSession.create(agentsHost(temporary.database))
      .forSession(sessionId)
      .withContext("soul", { provider: soul })
      .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
      .withCachedPrompt();
    expect((await agentsAgain.getHistory()).map((message) => message.id).slice(-2)).toEqual(["m5", "m6"]);
    await agentsAgain.refreshSystemPrompt();
    expect(agentsAgain.getContextBlock("memory")?.content).toBe(
      "The ferry leaves at nine. The café closes at four.",
    );
    const keys = temporary.database
      .prepare("SELECT label FROM cf_agents_context_blocks ORDER BY label")
      .all()
      .map((row) => (row as { label: string }).label);
    expect(keys).toEqual([`_system_prompt_${sessionId}`, `memory_${sessionId}`]);
  });
});

describe("the same database opened through the native path (sqliteBackend)", () => {
  it("refuses to serve agents' memory as empty, naming agentsSqliteBackend; nothing stored is lost", async () => {
    temporary = openTemporaryDatabase();
    const written = await writtenByAgents(temporary.database, "chat-1");
    const build = () =>
      new SessionBuilder(sqliteBackend(temporary!.database))
        .forSession("chat-1")
        .withContext("soul", { provider: soul })
        .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
        .withCachedPrompt()
        .build();
    const native = build();
    const refused = native.context.freezeSystemPrompt();
    await expect(refused).rejects.toThrow(/agentsSqliteBackend/);
    await expect(refused).rejects.toThrow(/"memory_chat-1"/);
    await expect(refused).rejects.toMatchObject({ code: "INVALID_CONFIG", label: "memory" });
    // The async read refuses too (a client without synchronous statements reads through `get`).
    await expect(build().context.load()).rejects.toThrow(/agentsSqliteBackend/);
    // Nothing was written over agents' rows; the path the error names serves them.
    const agentsRows = () =>
      temporary!.database.prepare("SELECT label, content FROM cf_agents_context_blocks ORDER BY label").all();
    const before = agentsRows();
    expect(before).toHaveLength(2);
    const dropIn = new SessionBuilder(agentsSqliteBackend(temporary.database))
      .forSession("chat-1")
      .withContext("soul", { provider: soul })
      .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
      .withCachedPrompt()
      .build();
    expect(await dropIn.context.freezeSystemPrompt()).toBe(written.prompt);
    expect(agentsRows()).toEqual(before);
  });

  it("a native session whose block has content under contextblocks' key reads it (no refusal)", async () => {
    temporary = openTemporaryDatabase();
    await writtenByAgents(temporary.database, "chat-1");
    const native = new SessionBuilder(sqliteBackend(temporary.database))
      .forSession("chat-1")
      .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
      .build();
    // Moved on purpose: the fact copied under contextblocks' key, then read as usual.
    await sqliteBackend(temporary.database).block("memory", "chat-1").set("The ferry leaves at nine.");
    await native.context.load();
    expect(native.context.getBlock("memory")?.content).toBe("The ferry leaves at nine.");
    // Other sessions of the same database never had agents' rows: they read as empty, as before.
    const other = new SessionBuilder(sqliteBackend(temporary.database))
      .forSession("chat-2")
      .withContext("memory")
      .build();
    await other.context.load();
    expect(other.context.getBlock("memory")?.content).toBe("");
  });
});

describe("agents' behaviours kept by the compatibility entry", () => {
  it("after a cold-start freeze, tools() reads the blocks, so getContextBlock answers as agents' does", async () => {
    temporary = openTemporaryDatabase();
    await writtenByAgents(temporary.database, "chat-1");
    const blockAfterTurnStart = async (session: {
      freezeSystemPrompt(): Promise<string>;
      tools(): Promise<unknown>;
      getContextBlock(label: string): { content: string } | null;
    }) => {
      await session.freezeSystemPrompt(); // served from the stored prompt: no block read
      await session.tools();
      return session.getContextBlock("memory")?.content ?? null;
    };
    const agents = AgentsSession.create(agentsHost(temporary.database))
      .forSession("chat-1")
      .withContext("soul", { provider: soul })
      .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
      .withCachedPrompt();
    const ours = Session.create(temporary.database)
      .forSession("chat-1")
      .withContext("soul", { provider: soul })
      .withContext("memory", { description: "Learned facts", maxTokens: 1100 })
      .withCachedPrompt();
    expect(await blockAfterTurnStart(agents)).toBe("The ferry leaves at nine.");
    expect(await blockAfterTurnStart(ours)).toBe("The ferry leaves at nine.");
  });

  it("keeps agents' default: a changed block waits for a refresh (no reminder), unless told otherwise", async () => {
    temporary = openTemporaryDatabase();
    const session = Session.create(temporary.database)
      .forSession("c")
      .withContext("memory")
      .withContext("date", { provider: { get: async () => "today" }, whenChanged: "remind" })
      .withCachedPrompt();
    await session.freezeSystemPrompt();
    await session.replaceContextBlock("memory", "A fact written after the freeze.");
    expect(await session.context.reminder()).toBeNull();
    const whenChanged = session.context.getConfigs().map((config) => config.whenChanged);
    expect(whenChanged).toEqual(["wait", "remind"]);
    const manager = new SessionManager(temporary.database).withContext("memory");
    expect(manager.getSession("m").context.getConfigs()[0]?.whenChanged).toBe("wait");
  });

  it("compact() without onCompaction() throws agents' words", async () => {
    temporary = openTemporaryDatabase();
    const session = Session.create(temporary.database);
    await expect(session.compact()).rejects.toThrow("No compaction function registered");
    expect(NO_COMPACTION_MESSAGE).toContain("Call onCompaction() first");
  });

  it('reads leaf id "" as the latest leaf, as agents does; refuses a compaction range agents would store and never show', async () => {
    temporary = openTemporaryDatabase();
    const agents = AgentsSession.create(agentsHost(temporary.database)).forSession("theirs");
    const ours = Session.create(temporary.database).forSession("ours");
    const provider = new AgentSessionProvider(temporary.database, "ours");
    // Ids are unique per database: agents' copies carry a prefix.
    for (const [session, prefix] of [
      [agents, "theirs-"],
      [ours, ""],
    ] as const) {
      await session.appendMessage(text(`${prefix}m1`, "user", "When does the ferry leave?"));
      await session.appendMessage(text(`${prefix}m2`, "assistant", "At nine."), `${prefix}m1`);
      await session.appendMessage(text(`${prefix}b2`, "assistant", "At ten."), `${prefix}m1`);
    }
    const ids = (messages: { id: string }[]) => messages.map((message) => message.id.replace("theirs-", ""));
    expect(ids(await agents.getHistory(""))).toEqual(["m1", "b2"]);
    expect(ids(await ours.getHistory(""))).toEqual(["m1", "b2"]);
    expect(ids(await provider.getHistory(""))).toEqual(["m1", "b2"]);
    expect(await ours.getPathLength("")).toBe(2);
    expect(await provider.getPathLength("")).toBe(2);
    expect(ids((await provider.getRecentHistory("", 1_000_000)).messages)).toEqual(["m1", "b2"]);
    // agents stores a range whose end is not a message of the session and no read shows it; the entry
    // refuses it, naming the id.
    await agents.addCompaction("never shown", "theirs-m1", "nowhere");
    expect(ids(await agents.getHistory())).toEqual(["m1", "b2"]);
    await expect(ours.addCompaction("never shown", "theirs-m1", "m2")).rejects.toThrow(
      /fromMessageId "theirs-m1" is not a message of this session/,
    );
    await expect(ours.addCompaction("never shown", "m1", "nowhere")).rejects.toThrow(
      /toMessageId "nowhere" is not a message of this session/,
    );
    expect(await ours.getCompactions()).toEqual([]);
  });

  it("tools() resolves to AI SDK tools whose results are text", async () => {
    temporary = openTemporaryDatabase();
    const session = Session.create(temporary.database)
      .forSession("c")
      .withContext("memory", { maxTokens: 500 });
    const tools = await session.tools();
    const execute = tools.set_context?.execute as (input: unknown, options: unknown) => Promise<unknown>;
    const answer = await execute(
      { label: "memory", content: "likes tea" },
      { toolCallId: "t", messages: [] },
    );
    expect(typeof answer).toBe("string");
    const refused = await execute({ label: "nope", content: "x" }, { toolCallId: "t", messages: [] });
    expect(refused).toMatch(/^Error: .*not found/i);
    expect(session.getContextBlock("memory")?.content).toBe("likes tea");
  });
});

describe("SessionManager methods that are synchronous in agents", () => {
  it("answer at once (create, get, list, rename, addUsage) and see what the async reads see", async () => {
    temporary = openTemporaryDatabase();
    const manager = new SessionManager(temporary.database);
    const info = manager.create("Support chat", { model: "m" });
    expect(info).toMatchObject({ name: "Support chat", model: "m", input_tokens: 0 });
    expect(manager.get(info.id)?.id).toBe(info.id);
    expect(manager.get("unknown")).toBeNull();
    manager.rename(info.id, "Renamed");
    manager.addUsage(info.id, 3, 4, 0.5);
    expect(manager.list()).toEqual([
      expect.objectContaining({
        id: info.id,
        name: "Renamed",
        input_tokens: 3,
        output_tokens: 4,
        estimated_cost: 0.5,
      }),
    ]);
    // The same rows through contextblocks' own (async) manager on the same database, and the one underneath.
    const own = new BaseSessionManager(sqliteBackend(temporary.database));
    expect(await own.get(info.id)).toEqual(manager.get(info.id));
    expect(manager.contextblocks).toBeInstanceOf(BaseSessionManager);
    expect(await manager.contextblocks.list()).toEqual(manager.list());
    expect(manager.contextblocks.getSession(info.id)).toBe(manager.getSession(info.id));
    // Refusals are thrown at once, naming the argument, and store nothing.
    expect(() => manager.create("x".repeat(2_000))).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    expect(() => manager.addUsage(info.id, Number.NaN, 0, 0)).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    expect(manager.list()).toHaveLength(1);
  });

  it("search answers at once, as agents' does: the messages appended since the last search are indexed in the call", async () => {
    temporary = openTemporaryDatabase();
    const manager = new SessionManager(temporary.database);
    // agents' own check (testManagerSearch): two sessions, a message each, then a search read at once.
    const chat1 = manager.create("Chat1");
    const chat2 = manager.create("Chat2");
    await manager.getSession(chat1.id).appendMessage(text("ms1", "user", "I love TypeScript"));
    await manager.getSession(chat2.id).appendMessage(text("ms2", "user", "Python is great"));
    const results = manager.search("TypeScript");
    expect(Array.isArray(results)).toBe(true);
    expect(results.map((hit) => [hit.id, hit.sessionId])).toEqual([["ms1", chat1.id]]);
    expect(results.some((hit) => hit.content.includes("TypeScript"))).toBe(true);
    // `await` in front still reads the hits; contextblocks' own manager gives the same.
    expect(await manager.search("Python")).toEqual(await manager.contextblocks.search("Python"));
    expect(() => manager.search("Python", { limit: 0 })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });

  it("where the backend's search cannot answer at once, search returns a promise whose misuse names the fix", async () => {
    const manager = new SessionManager({ ...inMemoryBackend(), searchMessagesSync: undefined });
    const pending = manager.search("anything") as unknown as Record<string, unknown>;
    expect(() => pending.length).toThrow(/SessionManager\.search returns a promise.*await search/);
    expect(await (pending as unknown as Promise<unknown[]>)).toEqual([]);
  });

  it("search's promise iterated as agents' array (for…of, destructuring, spread) names the fix, not 'is not iterable'", async () => {
    const manager = new SessionManager({ ...inMemoryBackend(), searchMessagesSync: undefined });
    const hits = manager.search("anything") as unknown as unknown[];
    const iterations: Array<() => unknown> = [
      () => {
        for (const hit of hits) return hit;
      },
      () => {
        const [first] = hits;
        return first;
      },
      () => [...hits],
    ];
    for (const iterate of iterations) {
      expect(iterate).toThrow(
        expect.objectContaining({
          code: "UNSUPPORTED",
          message: expect.stringMatching(
            /SessionManager\.search returns a promise.*await search\(…\)` before iterating/,
          ),
        }),
      );
    }
    // Still a promise to everything that treats it as one.
    expect(hits).toBeInstanceOf(Promise);
    expect(Array.isArray(hits)).toBe(false);
    expect(await Promise.all([hits])).toEqual([[]]);
  });

  it("refuse at once, naming the manager to use, on a backend whose registry is async", () => {
    const memory = inMemoryBackend();
    // The memory registry's async methods alone, as a Postgres registry has.
    const registry: SessionRegistry = {
      create: (...args) => memory.registry.create(...args),
      get: (id) => memory.registry.get(id),
      list: (options) => memory.registry.list(options),
      update: (id, changes) => memory.registry.update(id, changes),
      touch: (id) => memory.registry.touch(id),
      addUsage: (...args) => memory.registry.addUsage(...args),
      delete: (id) => memory.registry.delete(id),
    };
    const manager = new SessionManager({ ...memory, registry });
    expect(() => manager.create("chat")).toThrow(
      expect.objectContaining({
        code: "UNSUPPORTED",
        message: expect.stringMatching(/SessionManager\.create answers at once.*@contextblocks\/sessions/),
      }),
    );
  });
});
