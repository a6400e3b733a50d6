// Scenarios of cloudflare/agents' Session tests (packages/agents/src/tests/experimental/memory/session/
// session.test.ts), written for contextblocks and run through the compatibility entry. Where agents' test
// uses a SQL stub or a Durable Object, these use a real better-sqlite3 database through an Agent-shaped
// `sql`; a user-written `SessionProvider` (agents' extension point) stands in where agents' test uses one.
import {
  ContextBlocks,
  Session,
  SessionManager,
  type SessionMessage,
  type SessionProvider,
  type StoredCompaction,
} from "@contextblocks/agents/experimental/memory/session";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { call, describeTool, fixed, noteMap, skillMap, variable } from "./providers.js";

const say = (id: string, role: "user" | "assistant", text: string): SessionMessage => ({
  id,
  role,
  parts: [{ type: "text", text }],
});

/** agents' `SessionProvider` as a user writes it: messages and compactions in arrays, synchronous. */
function arrayProvider(messages: SessionMessage[] = [], compactions: StoredCompaction[] = []) {
  const provider = {
    getMessage: (id: string) => messages.find((message) => message.id === id) ?? null,
    getHistory: () => [...messages],
    getLatestLeaf: () => messages.at(-1) ?? null,
    getBranches: () => [],
    getPathLength: () => messages.length,
    appendMessage: (message: SessionMessage) => {
      messages.push(message);
    },
    updateMessage: () => {},
    deleteMessages: () => {},
    clearMessages: () => {
      messages.length = 0;
    },
    addCompaction: (summary: string, fromMessageId: string, toMessageId: string) => {
      const stored = { id: `c${compactions.length + 1}`, summary, fromMessageId, toMessageId, createdAt: "" };
      compactions.push(stored);
      return stored;
    },
    getCompactions: () => [...compactions],
  };
  return provider as unknown as SessionProvider;
}

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});
function agent() {
  temporary = openTemporaryDatabase();
  const database = temporary.database;
  const stored = (label: string) =>
    (
      database.prepare("SELECT content FROM cf_agents_context_blocks WHERE label = ?").get(label) as
        | { content: string }
        | undefined
    )?.content;
  return { host: agentsHost(database), stored };
}

describe("ContextBlocks: the frozen prompt", () => {
  const twoBlocks = () =>
    new ContextBlocks([
      { label: "soul", provider: fixed("You are helpful.") },
      { label: "memory", description: "Facts", maxTokens: 1100, provider: variable("likes TypeScript") },
    ]);
  it("toSystemPrompt answers the same string each time, with every block", async () => {
    const blocks = twoBlocks();
    await blocks.load();
    const prompt = blocks.toSystemPrompt();
    expect(blocks.toSystemPrompt()).toBe(prompt);
    for (const word of ["SOUL", "You are helpful.", "MEMORY", "likes TypeScript"])
      expect(prompt).toContain(word);
  });
  it("a write reaches the provider and leaves the frozen prompt as it was", async () => {
    const memory = variable("original");
    const blocks = new ContextBlocks([{ label: "memory", maxTokens: 1100, provider: memory }]);
    await blocks.load();
    const frozen = blocks.toSystemPrompt();
    await blocks.setBlock("memory", "updated");
    expect(memory.value).toBe("updated");
    expect(blocks.toSystemPrompt()).toBe(frozen);
  });
  it("refreshSnapshot() re-renders synchronously from what this instance holds, and stores nothing", async () => {
    const memory = variable("v1");
    const prompts = variable(null);
    const blocks = new ContextBlocks([{ label: "memory", maxTokens: 1100, provider: memory }], prompts);
    await blocks.load();
    const v1 = blocks.toSystemPrompt();
    await blocks.setBlock("memory", "v2");
    expect(blocks.toSystemPrompt()).toBe(v1);
    const v2 = blocks.refreshSnapshot();
    expect(v2).toContain("v2");
    expect(v2).not.toContain("v1");
    expect(blocks.toSystemPrompt()).toBe(v2);
    expect(prompts.value).toBeNull();
  });
  it("a read-only block refuses writes, saying readonly", async () => {
    const blocks = new ContextBlocks([{ label: "soul", provider: fixed("identity") }]);
    await blocks.load();
    await expect(blocks.setBlock("soul", "changed")).rejects.toThrow(/readonly/);
  });
  it("a write over maxTokens is refused, saying 'exceeds maxTokens'", async () => {
    const blocks = new ContextBlocks([{ label: "memory", maxTokens: 10, provider: variable("") }]);
    await blocks.load();
    await expect(blocks.setBlock("memory", "word ".repeat(50))).rejects.toThrow(/exceeds maxTokens/);
  });
  it("renders plain text sections, not XML", async () => {
    const blocks = twoBlocks();
    await blocks.load();
    const prompt = blocks.toSystemPrompt();
    expect(prompt).toContain("═");
    expect(prompt).not.toContain("<context_block");
  });
  it("renders an empty skill block", async () => {
    const blocks = new ContextBlocks([{ label: "skills", description: "Docs", provider: skillMap() }]);
    await blocks.load();
    expect(blocks.toSystemPrompt()).toContain("[loadable]");
  });
});

describe("Session.tools() without a load first", () => {
  const blocks = () => [
    { label: "soul", provider: fixed("identity") },
    { label: "memory", description: "Learned facts", maxTokens: 1100, provider: variable("") },
    { label: "todos", description: "Task list", maxTokens: 2000, provider: variable("") },
  ];
  it("describes the writable blocks only", async () => {
    const description = describeTool(
      await new Session(arrayProvider(), { context: blocks() }).tools(),
      "set_context",
    );
    expect(description).toContain("memory");
    expect(description).toContain("todos");
    expect(description).not.toContain("soul");
  });
  it("labels plain, skill and search blocks in set_context's description", async () => {
    const session = new Session(arrayProvider(), {
      context: [
        { label: "memory", description: "Learned facts", provider: variable("") },
        { label: "skills", description: "Loadable docs", provider: skillMap() },
        { label: "knowledge", description: "Searchable docs", provider: noteMap() },
      ],
    });
    const description = describeTool(await session.tools(), "set_context");
    expect(description).toContain('- "memory" (writable): Learned facts');
    expect(description).toContain('- "skills" (skill collection, keyed entries): Loadable docs');
    expect(description).toContain('- "knowledge" (searchable, keyed entries): Searchable docs');
    expect(description).toContain("metadata: { title, description }");
  });
  it("writes and appends through set_context, reporting tokens", async () => {
    const memory = variable("fact1");
    const tools = await new Session(arrayProvider(), {
      context: [{ label: "memory", maxTokens: 1100, provider: memory }],
    }).tools();
    expect(
      await call(tools, "set_context", { label: "memory", content: "\nfact2", action: "append" }),
    ).toMatch(/Written to memory.*tokens/);
    expect(memory.value).toBe("fact1\nfact2");
  });
  it("answers a write to a read-only block with an error naming readonly", async () => {
    const answer = await call(
      await new Session(arrayProvider(), { context: blocks() }).tools(),
      "set_context",
      {
        label: "soul",
        content: "changed",
      },
    );
    expect(answer).toContain("Error");
    expect(answer).toContain("readonly");
  });
  it("has no tools without writable blocks", async () => {
    const session = new Session(arrayProvider(), { context: [{ label: "soul", provider: fixed("x") }] });
    expect(Object.keys(await session.tools())).toEqual([]);
  });
});

describe("Session.create() on an Agent's sql", () => {
  it("makes a Session whose history starts empty", async () => {
    const session = Session.create(agent().host);
    expect(session).toBeInstanceOf(Session);
    expect(await session.getHistory()).toEqual([]);
  });
  it("withContext without a provider stores the block in cf_agents_context_blocks", async () => {
    const { host, stored } = agent();
    const tools = await Session.create(host)
      .withContext("memory", { description: "Facts", maxTokens: 1100 })
      .tools();
    await call(tools, "set_context", { label: "memory", content: "a fact" });
    expect(stored("memory")).toBe("a fact");
  });
  it("a read-only provider: no tools, and the block is in the prompt", async () => {
    const session = Session.create(agent().host).withContext("soul", { provider: fixed("You are helpful.") });
    expect(Object.keys(await session.tools())).toEqual([]);
    expect(await session.freezeSystemPrompt()).toContain("You are helpful.");
  });
  it("withCachedPrompt stores the frozen prompt under _system_prompt and serves it again", async () => {
    const { host, stored } = agent();
    const session = Session.create(host)
      .withContext("soul", { provider: fixed("Be kind.") })
      .withCachedPrompt();
    const prompt = await session.freezeSystemPrompt();
    expect(stored("_system_prompt")).toBe(prompt);
    expect(await session.freezeSystemPrompt()).toBe(prompt);
  });
  it.each([
    [
      "forSession first",
      (s: Session) => s.forSession("chat-123").withContext("memory", { maxTokens: 500 }).withCachedPrompt(),
    ],
    [
      "forSession last",
      (s: Session) => s.withContext("memory", { maxTokens: 500 }).withCachedPrompt().forSession("chat-123"),
    ],
  ])("%s: blocks and prompt go under agents' per-session keys", async (_order, build) => {
    const { host, stored } = agent();
    const session = build(Session.create(host));
    await call(await session.tools(), "set_context", { label: "memory", content: "namespaced" });
    await session.freezeSystemPrompt();
    expect(stored("memory_chat-123")).toBe("namespaced");
    expect(stored("memory")).toBeUndefined();
    expect(stored("_system_prompt_chat-123")).toBeDefined();
    expect(stored("_system_prompt")).toBeUndefined();
  });
  it("an explicit provider is used, and a null value renders an empty writable block", async () => {
    const session = Session.create(agent().host)
      .withContext("notes", { provider: variable("custom data") })
      .withContext("memory", { provider: variable(null) });
    const prompt = await session.freezeSystemPrompt();
    expect(prompt).toContain("custom data");
    expect(prompt).toContain("MEMORY");
    expect(prompt).toContain("[writable]");
  });
});

describe("ContextBlocks: edge cases", () => {
  it("freezes and stores a prompt of empty blocks", async () => {
    const promptStore = variable(null);
    const blocks = new ContextBlocks(
      [{ label: "memory", maxTokens: 500, provider: variable("") }],
      promptStore,
    );
    await blocks.load();
    const prompt = await blocks.freezeSystemPrompt();
    expect(promptStore.value).toBe(prompt);
    expect(await blocks.freezeSystemPrompt()).toBe(prompt);
  });
  it("a stored empty prompt is a prompt, not a missing one", async () => {
    const blocks = new ContextBlocks([], variable(""));
    await blocks.load();
    expect(await blocks.freezeSystemPrompt()).toBe("");
  });
});

describe("Session.compact() and automatic compaction", () => {
  const three = () => [say("m0", "user", "one"), say("m1", "assistant", "two"), say("m2", "user", "three")];
  it("throws 'No compaction function registered' without one", async () => {
    await expect(new Session(arrayProvider()).compact()).rejects.toThrow("No compaction function registered");
  });
  it("stores the overlay a compaction function returns, and nothing when it returns null", async () => {
    const compactions: StoredCompaction[] = [];
    const session = new Session(arrayProvider(three(), compactions)).onCompaction(async () => ({
      fromMessageId: "m0",
      toMessageId: "m1",
      summary: "SUMMARY",
    }));
    const result = await session.compact();
    expect(result?.summary).toBe("SUMMARY");
    expect(compactions.map((c) => [c.fromMessageId, c.toMessageId, c.summary])).toEqual([
      ["m0", "m1", "SUMMARY"],
    ]);
    const none = new Session(arrayProvider(three(), [])).onCompaction(async () => null);
    expect(await none.compact()).toBeNull();
  });
  it("compact(leafId) gives the function that branch's path and stores the overlay beside a sibling's", async () => {
    const messages = [
      say("m0", "user", "start"),
      say("m1", "assistant", "first answer"),
      say("m2", "user", "follow-up"),
      say("old", "assistant", "a superseded answer on another branch"),
    ];
    const compactions: StoredCompaction[] = [
      { id: "sibling", fromMessageId: "m0", toMessageId: "old", summary: "Sibling", createdAt: "" },
    ];
    const paths: string[][] = [];
    const provider = arrayProvider(messages, compactions) as unknown as Record<string, unknown>;
    provider.getHistory = (leafId?: string | null) =>
      leafId === "m2" ? messages.slice(0, 3) : [...messages];
    const session = new Session(provider as unknown as SessionProvider).onCompaction(async (history) => {
      paths.push(history.map((m) => m.id));
      return { fromMessageId: "m1", toMessageId: "m1", summary: "Branch" };
    });
    await session.compact("m2");
    expect(paths).toEqual([["m0", "m1", "m2"]]);
    expect(compactions.at(-1)).toMatchObject({ fromMessageId: "m1", toMessageId: "m1", summary: "Branch" });
  });
  it("a second compaction extends from the earliest overlay", async () => {
    const messages = Array.from({ length: 10 }, (_, i) =>
      say(`m${i}`, i % 2 ? "assistant" : "user", `msg ${i}`),
    );
    const compactions: StoredCompaction[] = [
      { id: "c1", fromMessageId: "m1", toMessageId: "m5", summary: "Round 1", createdAt: "" },
    ];
    const session = new Session(arrayProvider(messages, compactions)).onCompaction(async () => ({
      fromMessageId: "m6",
      toMessageId: "m8",
      summary: "Round 2",
    }));
    await session.compact();
    expect(compactions.at(-1)).toMatchObject({ fromMessageId: "m1", toMessageId: "m8", summary: "Round 2" });
  });
  it("a custom counter's non-finite answer counts as zero", async () => {
    let called = false;
    const session = new Session(arrayProvider())
      .onCompaction(async () => {
        called = true;
        return null;
      })
      .compactAfter(1, { tokenCounter: () => Number.NaN });
    await session.appendMessage(say("m0", "user", "short"));
    expect(called).toBe(false);
  });
  it("an append over the threshold compacts; under it, without a threshold or without a function, not", async () => {
    const run = async (configure: (s: Session) => Session) => {
      let called = 0;
      const session = configure(new Session(arrayProvider(three(), [])));
      session.onCompaction(async () => {
        called++;
        return null;
      });
      await session.appendMessage(say("m3", "assistant", "a long answer ".repeat(50)));
      return called;
    };
    expect(await run((s) => s.compactAfter(10))).toBe(1);
    expect(await run((s) => s.compactAfter(1_000_000))).toBe(0);
    expect(await run((s) => s)).toBe(0);
    const without = new Session(arrayProvider(three(), [])).compactAfter(10);
    await without.appendMessage(say("m3", "user", "x ".repeat(200)));
    expect(await without.getPathLength()).toBe(4);
  });
  it("counts the session's system prompt in the estimate", async () => {
    let called = 0;
    const session = new Session(arrayProvider([], []), {
      context: [{ label: "soul", provider: fixed("a very long soul ".repeat(200)) }],
    })
      .onCompaction(async () => {
        called++;
        return null;
      })
      .compactAfter(500);
    await session.appendMessage(say("m0", "user", "hi"));
    expect(called).toBe(1);
  });
  it("the estimate stores no prompt", async () => {
    const promptStore = variable(null);
    const session = new Session(arrayProvider(), {
      context: [{ label: "soul", provider: fixed("do not persist during estimate") }],
      promptStore,
    })
      .onCompaction(async () => null)
      .compactAfter(1_000_000);
    await session.appendMessage(say("m1", "user", "hello"));
    expect(promptStore.value).toBeNull();
  });
  it("the estimate reuses the stored frozen prompt", async () => {
    const seen: string[] = [];
    const session = new Session(arrayProvider(), {
      context: [{ label: "soul", provider: fixed("current") }],
      promptStore: variable("stored frozen prompt"),
      tokenCounter: ({ systemPrompt }) => {
        seen.push(systemPrompt);
        return 0;
      },
    })
      .onCompaction(async () => null)
      .compactAfter(1_000);
    await session.appendMessage(say("m1", "user", "hello"));
    expect(seen).toEqual(["stored frozen prompt"]);
  });
  it("a custom counter decides, and is given history, prompt and the loaded blocks", async () => {
    const inputs: unknown[] = [];
    const compactions: StoredCompaction[] = [];
    const session = new Session(arrayProvider([say("m0", "user", "short")], compactions), {
      context: [{ label: "memory", provider: fixed("current block content") }],
      promptStore: variable("cached frozen prompt"),
    })
      .onCompaction(async () => ({ fromMessageId: "m0", toMessageId: "m1", summary: "by the counter" }))
      .compactAfter(10, {
        tokenCounter: ({ messages, systemPrompt, contextBlocks }) => {
          inputs.push({
            n: messages.length,
            systemPrompt,
            blocks: contextBlocks.map((b) => [b.label, b.content]),
          });
          return 11;
        },
      });
    await session.appendMessage(say("m1", "assistant", "ok"));
    expect(inputs).toContainEqual({
      n: 2,
      systemPrompt: "cached frozen prompt",
      blocks: [["memory", "current block content"]],
    });
    expect(compactions[0]?.summary).toBe("by the counter");
  });
  it("a failing compaction reaches onCompactionError, and a failing handler never fails the append", async () => {
    const errors: unknown[] = [];
    const session = new Session(arrayProvider(three(), []), {
      onCompactionError: (error) => {
        errors.push(error);
        throw new Error("handler fails too");
      },
    })
      .onCompaction(async () => {
        throw new Error("model down");
      })
      .compactAfter(1);
    await session.appendMessage(say("m3", "user", "more"));
    expect(String(errors[0])).toMatch(/model down/);
    expect(await session.getPathLength()).toBe(4);
  });
});

describe("sessions on one Agent's database", () => {
  it("keep messages, prompts and blocks per session; the manager creates, lists, renames, searches and deletes", async () => {
    const { host } = agent();
    const a = Session.create(host)
      .forSession("a")
      .withContext("memory", { maxTokens: 500 })
      .withCachedPrompt();
    const b = Session.create(host)
      .forSession("b")
      .withContext("memory", { maxTokens: 500 })
      .withCachedPrompt();
    await a.appendMessage(say("a1", "user", "the ferry leaves at nine"));
    await b.appendMessage(say("b1", "user", "the lighthouse opens at noon"));
    expect((await a.getHistory()).map((m) => m.id)).toEqual(["a1"]);
    await a.replaceContextBlock("memory", "A's fact");
    await a.refreshSystemPrompt();
    expect(await a.freezeSystemPrompt()).toContain("A's fact");
    expect(await b.freezeSystemPrompt()).not.toContain("A's fact");
    await b.clearMessages();
    expect(await a.getPathLength()).toBe(1);

    const manager = new SessionManager(host);
    const info = await manager.create("Harbour chat");
    await manager.append(info.id, say("h1", "user", "where is the harbour master"));
    expect((await manager.list()).map((s) => s.id)).toContain(info.id);
    await manager.rename(info.id, "Harbour");
    expect((await manager.get(info.id))?.name).toBe("Harbour");
    expect((await manager.search("harbour master")).length).toBeGreaterThan(0);
    await manager.delete(info.id);
    expect(await manager.get(info.id)).toBeNull();
  });
});
