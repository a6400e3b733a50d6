// More scenarios of cloudflare/agents' Session tests (session.test.ts): createCompactFunction's details,
// reasoning in the token estimate, the budgeted-read fallback, status frames to an Agent's clients, the
// message-change hook, and the SessionManager's session_search tool, fork order and agents' method names.
// Written for contextblocks and run through the compatibility entry on a real better-sqlite3 database.
import {
  Session,
  SessionManager,
  type SessionMessage,
  type SessionProvider,
  type StoredCompaction,
} from "@contextblocks/agents/experimental/memory/session";
import {
  COMPACTION_PREFIX,
  createCompactFunction,
  estimateMessageTokens,
} from "@contextblocks/agents/experimental/memory/utils";
import { agentsHost, openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { afterEach, describe, expect, it } from "vitest";

const say = (id: string, role: "user" | "assistant", text: string): SessionMessage => ({
  id,
  role,
  parts: [{ type: "text", text }],
});

const conversation = (count: number, text = "a line of talk"): SessionMessage[] =>
  Array.from({ length: count }, (_, index) => say(`m${index}`, index % 2 === 0 ? "user" : "assistant", text));

/** A tool-heavy turn: an assistant call with a large output. */
const toolTurn = (id: string, size: number): SessionMessage => ({
  id,
  role: "assistant",
  parts: [
    {
      type: "tool-read_file",
      toolCallId: `${id}-call`,
      state: "output-available",
      input: { path: "log.txt" },
      output: "x".repeat(size),
    },
  ],
});

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

/** An Agent-shaped host over a fresh better-sqlite3 file, with `broadcast` collecting the frames sent. */
function agent() {
  temporary = openTemporaryDatabase();
  const frames: Record<string, unknown>[] = [];
  const host = {
    ...agentsHost(temporary.database),
    broadcast: (message: string) => {
      frames.push(JSON.parse(message) as Record<string, unknown>);
    },
  };
  return { host, frames };
}

describe("createCompactFunction", () => {
  const summarize = async () => "the summary";

  it("returns null when there are no more messages than protectHead + minTailMessages", async () => {
    const compact = createCompactFunction({
      summarize,
      protectHead: 3,
      minTailMessages: 2,
      tailTokenBudget: 0,
    });
    expect(await compact(conversation(5))).toBeNull();
    expect(await compact(conversation(6))).toEqual({
      fromMessageId: "m3",
      toMessageId: "m3",
      summary: "the summary",
    });
  });

  it("summarizes the middle: from the first message after the head to the last before the tail", async () => {
    let prompt = "";
    const compact = createCompactFunction({
      summarize: async (text) => {
        prompt = text;
        return "the summary";
      },
      protectHead: 1,
      minTailMessages: 2,
      tailTokenBudget: 0,
    });
    const messages = conversation(8);
    messages[3] = say("m3", "assistant", "the ferry leaves at nine");
    const result = await compact(messages);
    expect(result).toEqual({ fromMessageId: "m1", toMessageId: "m5", summary: "the summary" });
    expect(prompt).toContain("the ferry leaves at nine");
  });

  it("a supplied token counter budgets a tool-heavy tail the estimate under-counts", async () => {
    const messages = [...conversation(4), toolTurn("t1", 40), toolTurn("t2", 40), toolTurn("t3", 40)];
    const options = { summarize, protectHead: 1, minTailMessages: 1, tailTokenBudget: 200 };
    // The estimate sees small tool turns: everything after the head fits the tail, nothing to compact.
    expect(await createCompactFunction(options)(messages)).toBeNull();
    // A counter that knows tool outputs are expensive keeps only the newest turn in the tail.
    const counted = createCompactFunction({
      ...options,
      tokenCounter: (list) => list.reduce((sum, m) => sum + (m.id.startsWith("t") ? 150 : 5), 0),
    });
    expect(await counted(messages)).toMatchObject({ fromMessageId: "m1", toMessageId: "t2" });
  });

  it("without its own counter it uses the session's (compactAfter's tokenCounter, passed as context)", async () => {
    const seen: number[] = [];
    const compact = createCompactFunction({
      summarize,
      protectHead: 1,
      minTailMessages: 1,
      tailTokenBudget: 200,
    });
    const messages = [...conversation(4), toolTurn("t1", 40), toolTurn("t2", 40)];
    const result = await compact(messages, {
      tokenCounter: ({ messages: list }) => {
        seen.push(list.length);
        return list.reduce((sum, m) => sum + (m.id.startsWith("t") ? 150 : 5), 0);
      },
    });
    expect(result).toMatchObject({ fromMessageId: "m1", toMessageId: "t1" });
    expect(seen.length).toBeGreaterThan(0);
  });
});

describe("token estimates and budgeted reads", () => {
  it("counts reasoning parts", () => {
    const plain = say("a", "assistant", "ok");
    const reasoning: SessionMessage = {
      ...plain,
      parts: [
        ...plain.parts,
        { type: "reasoning", text: "first weigh the tide tables against the timetable" },
      ],
    };
    expect(estimateMessageTokens([reasoning])).toBeGreaterThan(estimateMessageTokens([plain]) + 5);
  });

  it("getRecentHistory on a provider without budgeted reads returns the whole path and its real size", async () => {
    const messages = [say("m1", "user", "hello"), say("m2", "assistant", "hi")];
    const session = Session.create(arrayProvider(messages));
    const result = await session.getRecentHistory(1);
    expect(result.truncated).toBe(false);
    expect(result.messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    expect(result.totalContentBytes).toBe(
      result.messages.reduce((sum, m) => sum + JSON.stringify(m).length, 0),
    );
  });

  it("getHistoryRowStats resolves null (unsupported) for a store without row stats, which agents' callers handle", async () => {
    expect(await Session.create(arrayProvider()).getHistoryRowStats()).toBeNull();
  });
});

/** agents' `SessionProvider` with row stats, counting the reads a skill restore makes. */
function countingProvider(messages: SessionMessage[], rowStats: boolean) {
  const counts = { getHistory: 0, getHistoryRowStats: 0, getMessage: 0 };
  const provider = arrayProvider(messages) as unknown as Record<string, unknown>;
  const getMessage = provider.getMessage as (id: string) => SessionMessage | null;
  const getHistory = provider.getHistory as () => SessionMessage[];
  provider.getMessage = (id: string) => {
    counts.getMessage++;
    return getMessage(id);
  };
  provider.getHistory = () => {
    counts.getHistory++;
    return getHistory();
  };
  if (rowStats) {
    provider.getHistoryRowStats = () => {
      counts.getHistoryRowStats++;
      return messages.map((m) => ({ id: m.id, role: m.role, bytes: JSON.stringify(m).length }));
    };
  }
  return { provider: provider as unknown as SessionProvider, counts };
}

const pirateSkills = {
  get: async () => "pirate: talk like a pirate",
  load: async () => "Arr",
};
const loadedPirate = (): SessionMessage[] => [
  say("u1", "user", "hi"),
  {
    id: "a1",
    role: "assistant",
    parts: [
      {
        type: "tool-load_context",
        toolName: "load_context",
        toolCallId: "a1-call",
        state: "output-available",
        input: { label: "skills", key: "pirate" },
        output: "Arr",
      },
    ],
  },
  say("u2", "user", "more"),
];

describe("skill restore reads are bounded (agents #1710)", () => {
  it("with row stats, only the assistant rows are read, one by one, never the whole path", async () => {
    const { provider, counts } = countingProvider(loadedPirate(), true);
    const session = Session.create(provider).withContext("skills", { provider: pirateSkills });
    await session.tools();
    expect(session.context.loadedEntries().map((entry) => `${entry.label}:${entry.key}`)).toEqual([
      "skills:pirate",
    ]);
    expect(counts).toEqual({ getHistory: 0, getHistoryRowStats: 1, getMessage: 1 });
    expect(await session.getHistoryRowStats()).toHaveLength(3);
  });

  it("without row stats, the path is read whole once", async () => {
    const { provider, counts } = countingProvider(loadedPirate(), false);
    const session = Session.create(provider).withContext("skills", { provider: pirateSkills });
    await session.tools();
    expect(session.context.loadedEntries().map((entry) => `${entry.label}:${entry.key}`)).toEqual([
      "skills:pirate",
    ]);
    expect(counts.getHistory).toBe(1);
    expect(counts.getHistoryRowStats).toBe(0);
  });

  it("a skill block added later restores through the row stats; without a skill block nothing is scanned", async () => {
    const { provider, counts } = countingProvider(loadedPirate(), true);
    const session = Session.create(provider);
    await session.getHistory();
    expect(counts.getHistoryRowStats).toBe(0);
    await session.addContext("skills", { provider: pirateSkills });
    expect(counts.getHistoryRowStats).toBe(1);
    expect(session.context.loadedEntries().map((entry) => `${entry.label}:${entry.key}`)).toEqual([
      "skills:pirate",
    ]);
  });
});

describe("status frames and the message-change hook", () => {
  it("an Agent's clients hear cf_agent_session: idle after writes, compacting then idle around a compaction", async () => {
    const { host, frames } = agent();
    const session = Session.create(host).forSession("chat");
    session.onCompaction(async () => ({ fromMessageId: "m1", toMessageId: "m3", summary: "Compacted" }));
    for (const message of conversation(6)) await session.appendMessage(message);
    expect(frames).toHaveLength(6);
    expect(frames.every((frame) => frame.type === "cf_agent_session" && frame.phase === "idle")).toBe(true);
    frames.length = 0;

    await session.compact();
    expect(frames.map((frame) => frame.phase)).toEqual(["compacting", "idle"]);
    expect(frames[0]?.tokenEstimate).toBeGreaterThan(0);
    expect(frames[1]?.compacted).toEqual({ tokensBefore: frames[0]?.tokenEstimate });
    const history = await session.getHistory();
    expect(history.some((m) => m.id.startsWith(COMPACTION_PREFIX))).toBe(true);
  });

  it("a failing compaction sends cf_agent_session_error and resolves null, as agents' compact()", async () => {
    const { host, frames } = agent();
    const session = Session.create(host).forSession("chat");
    session.onCompaction(async () => {
      throw new Error("model down");
    });
    for (const message of conversation(4)) await session.appendMessage(message);
    frames.length = 0;
    await expect(session.compact()).resolves.toBeNull();
    expect(frames.map((frame) => frame.type)).toEqual(["cf_agent_session", "cf_agent_session_error"]);
    expect(frames.at(-1)).toEqual({ type: "cf_agent_session_error", error: "model down" });
    expect(await session.getCompactions()).toEqual([]);
  });

  it("internal_rewriteMessage stores and tells the listener without a status frame; updateMessage sends one", async () => {
    const { host, frames } = agent();
    const session = Session.create(host).forSession("chat");
    await session.appendMessage(say("m1", "assistant", "draft"));
    const events: string[] = [];
    session.internal_onMessagesChanged((event) => {
      events.push(event.type);
    });
    frames.length = 0;

    await session.updateMessage(say("m1", "assistant", "public edit"));
    expect(frames).toHaveLength(1);
    expect(events).toEqual(["update"]);

    events.length = 0;
    await session.internal_rewriteMessage(say("m1", "assistant", "rewritten"));
    expect(frames).toHaveLength(1);
    expect(events).toEqual(["update"]);
    expect((await session.getMessage("m1"))?.parts[0]?.text).toBe("rewritten");
  });
});

describe("SessionManager: agents' methods", () => {
  it("session_search finds messages across sessions and answers 'No results found.' otherwise", async () => {
    const { host } = agent();
    const manager = new SessionManager(host);
    const a = await manager.create("Harbour");
    const b = await manager.create("Garden");
    await manager.append(a.id, say("a1", "user", "the harbour master keeps the ferry timetable"));
    await manager.append(b.id, say("b1", "user", "plant the tulips in October"));
    const tool = manager.tools().session_search as unknown as {
      execute: (input: { query: string }) => Promise<string>;
    };
    expect(await tool.execute({ query: "ferry timetable" })).toContain("harbour master");
    expect(await tool.execute({ query: "tulips" })).toContain("October");
    expect(await tool.execute({ query: "zeppelin" })).toBe("No results found.");
  });

  it("getSession gives agents' Session (text tool results); getMessageCount counts the path", async () => {
    const { host } = agent();
    const manager = new SessionManager(host).withContext("memory", { maxTokens: 500 });
    const info = await manager.create("Notes");
    const session = manager.getSession(info.id);
    expect(session).toBeInstanceOf(Session);
    const tools = await session.tools();
    const set = tools.set_context as unknown as { execute: (input: object) => Promise<unknown> };
    expect(typeof (await set.execute({ label: "memory", content: "likes tea" }))).toBe("string");
    await manager.append(info.id, say("n1", "user", "one"));
    await manager.append(info.id, say("n2", "assistant", "two"));
    expect(await manager.getMessageCount(info.id)).toBe(2);
  });

  it("fork moves the forked session to the top of list()", async () => {
    const { host } = agent();
    const manager = new SessionManager(host);
    const first = await manager.create("First");
    await manager.append(first.id, say("f1", "user", "start"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await manager.create("Second");
    await new Promise((resolve) => setTimeout(resolve, 5));
    const fork = await manager.fork(first.id, "f1", "Fork");
    expect((await manager.list())[0]?.id).toBe(fork.id);
    expect((await manager.list()).map((s) => s.id)).toContain(second.id);
    expect((await manager.getHistory(fork.id)).map((m) => m.id)).toHaveLength(1);
  });

  it("rename and addUsage answer at once, as agents'", () => {
    const { host } = agent();
    const manager = new SessionManager(host);
    const info = manager.create("Usage");
    expect(manager.rename(info.id, "Renamed")).toBeUndefined();
    expect(manager.addUsage(info.id, 10, 5, 0.01)).toBeUndefined();
    expect(manager.get(info.id)).toMatchObject({ name: "Renamed", input_tokens: 10, output_tokens: 5 });
    expect(() => manager.rename("unknown", "x")).toThrow(expect.objectContaining({ code: "NOT_FOUND" }));
  });
});
