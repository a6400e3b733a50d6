import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { ContextBlocks, isContextError } from "@contextblocks/core";
import { InMemoryContextProvider, InMemorySkillProvider, InMemoryStore } from "@contextblocks/core/memory";
import { SessionBuilder, SessionManager } from "@contextblocks/sessions";
import {
  InMemoryRunStateStore,
  InMemorySessionRegistry,
  InMemorySessions,
  inMemoryBackend,
} from "@contextblocks/sessions/memory";
import {
  answer,
  callTool,
  conversation,
  scriptedModel,
  scriptedStreamModel,
} from "@contextblocks/test-kit/model";
import {
  convertToModelMessages,
  generateText,
  type LanguageModel,
  stepCountIs,
  streamText,
  type UIMessage,
} from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ContextPlugin,
  contextMiddleware,
  contextPipeline,
  InMemoryHistoryPlugin,
  loadedSkillKeys,
  SessionHistoryPlugin,
  unloadSkill,
} from "../../src/index.js";
import { assertStablePrefix, comparePrefix } from "../../src/test.js";

/**
 * One "database" in memory: the parts of an in-memory backend, shared by every backend made on them, so a
 * new backend on the same parts is a restart (the stores keep messages as JSON text, as a database does).
 */
interface Parts {
  sessions: InMemorySessions;
  blocks: InMemoryStore;
  runState: InMemoryRunStateStore;
  registry: InMemorySessionRegistry;
}

interface TemporaryDatabase {
  readonly database: Parts;
  reopen(): Parts;
  remove(): void;
}

function openTemporaryDatabase(): TemporaryDatabase {
  const database: Parts = {
    sessions: new InMemorySessions(),
    blocks: new InMemoryStore(),
    runState: new InMemoryRunStateStore(),
    registry: new InMemorySessionRegistry(),
  };
  return { database, reopen: () => database, remove: () => undefined };
}

let temporary: TemporaryDatabase;
beforeEach(() => {
  temporary = openTemporaryDatabase();
});
afterEach(() => temporary.remove());

/** Blocks like an agent's: a fixed soul, a writable memory, and an environment block that reminds. */
function createContext(store: InMemoryStore, today: () => string = () => "Mon"): ContextBlocks {
  return new ContextBlocks(
    [
      { label: "soul", provider: { get: async () => "You are a careful assistant." } },
      {
        label: "memory",
        description: "Facts about the user",
        maxTokens: 200,
        provider: new InMemoryContextProvider({ store }),
      },
      { label: "environment", provider: { get: async () => `Today is ${today()}.` }, whenChanged: "remind" },
    ],
    new InMemoryContextProvider({ store, label: "_system_prompt" }),
  );
}

/** What a process builds on start: a session on the backend and a pipeline whose history is that session. */
function start(
  database: Parts,
  model: LanguageModel & Parameters<typeof contextPipeline>[0]["model"],
  store: InMemoryStore,
  options: { today?: () => string; plugins?: ContextPlugin[] } = {},
) {
  const session = new SessionBuilder(inMemoryBackend(database)).forSession("chat-1").build();
  const history = new SessionHistoryPlugin("history", { session });
  const pipeline = contextPipeline({
    model,
    context: createContext(store, options.today),
    plugins: [history, ...(options.plugins ?? [])],
    stateStore: database.runState,
  });
  return { session, history, pipeline };
}

function stored(
  messages: ReadonlyArray<{ role: string; parts: ReadonlyArray<{ type: string; text?: string }> }>,
) {
  return messages.map(
    (message) =>
      `${message.role}: ${message.parts.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join(" | ")}`,
  );
}

/** Asserts the next call repeats every message of the previous one byte for byte, after the same prefix. */
async function assertCachedHistory(previous: LanguageModelV3CallOptions, next: LanguageModelV3CallOptions) {
  await assertStablePrefix(previous, next);
  const { messages } = await comparePrefix(previous, next);
  expect(messages.sharedPrefix).toBe(messages.previousCount);
}

describe("SessionHistoryPlugin through generateText", () => {
  it("stores a multi-turn conversation in the session and replays it after a restart", async () => {
    const store = new InMemoryStore();
    const model = scriptedModel([answer("Hello Ada."), answer("You are Ada."), answer("Still here.")]);
    const first = start(temporary.database, model, store);

    await generateText({ model: first.pipeline.model, tools: first.pipeline.tools, prompt: "I'm Ada." });
    await generateText({ model: first.pipeline.model, tools: first.pipeline.tools, prompt: "Who am I?" });

    const database = temporary.reopen();
    const second = start(database, model, store);
    const result = await generateText({
      model: second.pipeline.model,
      tools: second.pipeline.tools,
      prompt: "Are you there?",
    });
    expect(result.text).toBe("Still here.");

    const [, turn2, turn3] = model.doGenerateCalls;
    expect(conversation(turn3)).toEqual([
      "user: I'm Ada.",
      "assistant: Hello Ada.",
      "user: Who am I?",
      "assistant: You are Ada.",
      "user: Are you there?",
    ]);
    // Turn 3 (another process) repeats turn 2's request byte for byte: the provider's cache holds.
    await assertCachedHistory(turn2!, turn3!);
    expect(stored(await second.session.getHistory())).toEqual([
      "user: I'm Ada.",
      "assistant: Hello Ada.",
      "user: Who am I?",
      "assistant: You are Ada.",
      "user: Are you there?",
      "assistant: Still here.",
    ]);
  });

  it("stores a tool round trip as one UI tool part and replays the loop exactly as the SDK sent it", async () => {
    const store = new InMemoryStore();
    const model = scriptedModel([
      callTool("call-1", "set_context", { label: "memory", content: "Name: Ada." }),
      answer("Noted, Ada."),
      answer("You are Ada."),
      answer("Yes."),
    ]);
    const first = start(temporary.database, model, store);
    const loop = await generateText({
      model: first.pipeline.model,
      tools: first.pipeline.tools,
      prompt: "I'm Ada.",
      stopWhen: stepCountIs(3),
    });
    expect(loop.text).toBe("Noted, Ada.");

    // The session holds what a chat UI would: the call and its result in one tool part.
    const history = await first.session.getHistory();
    expect(stored(history)).toEqual([
      "user: I'm Ada.",
      "assistant: [tool-set_context]",
      "assistant: Noted, Ada.",
    ]);
    const toolPart = history[1]!.parts[0]!;
    expect(toolPart).toMatchObject({
      type: "tool-set_context",
      toolCallId: "call-1",
      state: "output-available",
      input: { label: "memory", content: "Name: Ada." },
    });
    expect(typeof toolPart.output).toBe("string");

    const database = temporary.reopen();
    const second = start(database, model, store);
    await generateText({ model: second.pipeline.model, tools: second.pipeline.tools, prompt: "Who am I?" });
    await generateText({ model: second.pipeline.model, tools: second.pipeline.tools, prompt: "Sure?" });

    const [firstStep, lastStep, nextTurn, turnAfter] = model.doGenerateCalls;
    expect(conversation(nextTurn)).toEqual([
      "user: I'm Ada.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "assistant: Noted, Ada.",
      "user: Who am I?",
    ]);
    // The loop's last step sent [user, call, result]: the next turn (after a restart) repeats it exactly.
    await assertCachedHistory(lastStep!, nextTurn!);
    await assertCachedHistory(nextTurn!, turnAfter!);
    await assertStablePrefix(firstStep!, turnAfter!);
  });

  it("never stores the reminder, which reaches the model on the newest user message only", async () => {
    const store = new InMemoryStore();
    let today = "Mon";
    const model = scriptedModel([answer("One."), answer("Two.")]);
    const { session, pipeline } = start(temporary.database, model, store, { today: () => today });
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "First" });
    today = "Tue";
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Second" });

    const sent = conversation(model.doGenerateCalls[1]);
    expect(sent.at(-1)).toContain("Today is Tue.");
    const rows = [...temporary.database.sessions.records.values()];
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row.content).not.toContain("Today is");
    expect(stored(await session.getHistory())).toEqual([
      "user: First",
      "assistant: One.",
      "user: Second",
      "assistant: Two.",
    ]);
  });
  it("loads the branch with compaction overlays applied, as getHistory gives it", async () => {
    const store = new InMemoryStore();
    const model = scriptedModel([answer("Hello Ada."), answer("Tea, then."), answer("Yes.")]);
    const { session, pipeline } = start(temporary.database, model, store);
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "I'm Ada." });
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "I like tea." });
    const [first, , , fourth] = await session.getHistory();
    await session.addCompaction("Ada introduced herself.", first!.id, fourth!.id);
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Remember me?" });
    expect(conversation(model.doGenerateCalls[2])).toEqual([
      "assistant: Ada introduced herself.",
      "user: Remember me?",
    ]);
    // The stored messages are untouched: the overlay is a view.
    expect(await session.store.getPathLength()).toBe(6);
  });
});

describe("SessionHistoryPlugin through streamText", () => {
  it("stores a streamed tool loop and replays it byte for byte on the next streamed turn", async () => {
    const store = new InMemoryStore();
    const model = scriptedStreamModel([
      callTool("call-1", "set_context", { label: "memory", content: "Likes tea." }),
      answer("Tea noted."),
      answer("You like tea."),
    ]);
    const first = start(temporary.database, model, store);
    const loop = streamText({
      model: first.pipeline.model,
      tools: first.pipeline.tools,
      prompt: "I like tea.",
      stopWhen: stepCountIs(3),
    });
    expect(await loop.text).toBe("Tea noted.");
    expect(store.blocks.get("memory")).toBe("Likes tea.");

    const second = start(temporary.reopen(), model, store);
    const next = streamText({
      model: second.pipeline.model,
      tools: second.pipeline.tools,
      prompt: "Drinks?",
    });
    expect(await next.text).toBe("You like tea.");

    const [, lastStep, nextTurn] = model.doStreamCalls;
    await assertCachedHistory(lastStep!, nextTurn!);
    expect(stored(await second.session.getHistory())).toEqual([
      "user: I like tea.",
      "assistant: [tool-set_context]",
      "assistant: Tea noted.",
      "user: Drinks?",
      "assistant: You like tea.",
    ]);
  });

  it("stores nothing from a stream whose afterCall failed", async () => {
    const store = new InMemoryStore();
    const model = scriptedStreamModel([answer("Lost.")]);
    const failing: ContextPlugin = {
      sourceId: "flaky",
      afterCall() {
        throw new Error("boom");
      },
    };
    const { session, pipeline } = start(temporary.database, model, store, { plugins: [failing] });
    const errors: unknown[] = [];
    const result = streamText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "Hi",
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "PLUGIN_FAILED", message: expect.stringContaining('"flaky"') });
    expect(await session.getHistory()).toEqual([]);
  });
});

describe("SessionHistoryPlugin configuration and flags", () => {
  it("counts as a loading history plugin: a second one is refused", () => {
    const session = new SessionBuilder(inMemoryBackend(temporary.database)).forSession("chat-1").build();
    const history = new SessionHistoryPlugin("history", { session });
    const error = (() => {
      try {
        contextMiddleware({ plugins: [history, new InMemoryHistoryPlugin("memory")] });
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(isContextError(error) && error.code === "INVALID_CONFIG").toBe(true);
    expect(String((error as Error).message)).toContain('"history" and "memory"');
    // With loadMessages: false it is an audit log beside another loader.
    const audit = new SessionHistoryPlugin("audit", { session, loadMessages: false });
    expect(() => contextMiddleware({ plugins: [new InMemoryHistoryPlugin("memory"), audit] })).not.toThrow();
  });

  it("refuses options it cannot use, naming them", () => {
    const bad = [
      () => new SessionHistoryPlugin("history", undefined as never),
      () => new SessionHistoryPlugin("history", { session: {} as never }),
      () =>
        new SessionHistoryPlugin("history", {
          session: new SessionBuilder(inMemoryBackend(temporary.database)).build(),
          maxBytes: -1,
        }),
    ];
    for (const make of bad)
      expect(make).toThrow(/SessionHistoryPlugin: (expected options|session must be|maxBytes)/);
  });

  it("stores what the flags say: an audit log with the context messages, no loading", async () => {
    const session = new SessionBuilder(inMemoryBackend(temporary.database)).forSession("audit").build();
    const audit = new SessionHistoryPlugin("audit", {
      session,
      loadMessages: false,
      storeContextMessages: true,
    });
    const memory = new InMemoryHistoryPlugin("memory");
    const retrieval: ContextPlugin = {
      sourceId: "rag",
      beforeCall(run) {
        run.extendMessages("rag", [{ role: "user", content: "Retrieved note." }]);
      },
    };
    const outputsOnly = new SessionHistoryPlugin("outputs", {
      session: new SessionBuilder(inMemoryBackend(temporary.database)).forSession("outputs").build(),
      loadMessages: false,
      storeInputs: false,
    });
    const model = scriptedModel([answer("One."), answer("Two.")]);
    const pipeline = contextPipeline({ model, plugins: [memory, retrieval, audit, outputsOnly] });
    await generateText({ model: pipeline.model, prompt: "First" });
    await generateText({ model: pipeline.model, prompt: "Second" });

    // The model saw the memory provider's history once, not the audit's.
    expect(conversation(model.doGenerateCalls[1])).toEqual([
      "user: First",
      "assistant: One.",
      "user: Retrieved note.",
      "user: Second",
    ]);
    expect(stored(await session.getHistory())).toEqual([
      "user: Retrieved note.",
      "user: First",
      "assistant: One.",
      "user: Retrieved note.",
      "user: Second",
      "assistant: Two.",
    ]);
    expect(stored(await (await outputsOnly.sessionOf("any")).getHistory())).toEqual([
      "assistant: One.",
      "assistant: Two.",
    ]);
  });

  it("gives each call id its own session through a SessionManager", async () => {
    const manager = new SessionManager(inMemoryBackend(temporary.database));
    const history = new SessionHistoryPlugin("history", { session: manager });
    const model = scriptedModel([answer("Hi Ada."), answer("Hi Bo."), answer("You are Ada.")]);
    const pipeline = contextPipeline({ model, plugins: [history] });
    const as = (sessionId: string) => ({ contextblocks: { sessionId } });
    await generateText({ model: pipeline.model, prompt: "I'm Ada.", providerOptions: as("ada") });
    await generateText({ model: pipeline.model, prompt: "I'm Bo.", providerOptions: as("bo") });
    await generateText({ model: pipeline.model, prompt: "Who am I?", providerOptions: as("ada") });
    expect(conversation(model.doGenerateCalls[2])).toEqual([
      "user: I'm Ada.",
      "assistant: Hi Ada.",
      "user: Who am I?",
    ]);
    expect(stored(await manager.getSession("bo").getHistory())).toEqual([
      "user: I'm Bo.",
      "assistant: Hi Bo.",
    ]);
  });

  it("loads a bounded window with maxBytes, starting at a user message", async () => {
    const session = new SessionBuilder(inMemoryBackend(temporary.database)).forSession("window").build();
    const writer = new SessionHistoryPlugin("history", { session });
    for (let turn = 1; turn <= 5; turn++) {
      await writer.saveMessages("window", [
        { role: "user", content: [{ type: "text", text: `Question ${turn} ${"x".repeat(100)}` }] },
        { role: "assistant", content: [{ type: "text", text: `Answer ${turn}` }] },
      ]);
    }
    const windowed = new SessionHistoryPlugin("history", { session, maxBytes: 500 });
    const loaded = await windowed.getMessages("window");
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.length).toBeLessThan(10);
    expect(loaded[0]?.role).toBe("user");
    expect(loaded.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "Answer 5" }] });
    expect(await writer.getMessages("window")).toHaveLength(10);
  });
});

describe("SessionHistoryPlugin and the session's own features", () => {
  it("stores load_context so getLoadedSkillKeys sees it and unloadSkill shrinks the next turn's prompt", async () => {
    const store = new InMemoryStore();
    const skills = { "pdf-forms": { content: "PDF FORM INSTRUCTIONS", description: "Forms" } };
    const skillProvider = new InMemorySkillProvider({ store, skills });
    const session = new SessionBuilder(inMemoryBackend(temporary.database))
      .forSession("chat")
      .withContext("skills", { description: "Skills to load", provider: skillProvider })
      .build();
    const context = new ContextBlocks([
      { label: "skills", description: "Skills to load", provider: skillProvider },
    ]);
    const model = scriptedModel([
      callTool("load-1", "load_context", { label: "skills", key: "pdf-forms" }),
      answer("Loaded."),
      answer("Done."),
    ]);
    const pipeline = contextPipeline({
      model,
      context,
      plugins: [new SessionHistoryPlugin("history", { session })],
    });
    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "Fill the form.",
      stopWhen: stepCountIs(2),
    });
    expect(conversation(model.doGenerateCalls[1]).at(-1)).toBe("tool: [tool-result load_context]");
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toContain("PDF FORM INSTRUCTIONS");

    expect([...(await loadedSkillKeys(session))]).toEqual(["skills:pdf-forms"]);
    expect(await unloadSkill(session, "skills", "pdf-forms")).toBe(true);
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Thanks." });
    const sent = JSON.stringify(model.doGenerateCalls[2]!.prompt);
    expect(sent).not.toContain("PDF FORM INSTRUCTIONS");
    expect(sent).toContain("[unloaded: pdf-forms from skills]");
  });
});

describe("runMessagesOf on messages a chat UI stored", () => {
  it("converts UI messages with steps and tool parts as convertToModelMessages does", async () => {
    const ui: UIMessage[] = [
      { id: "u", role: "user", parts: [{ type: "text", text: "Weather?" }] },
      {
        id: "a",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Checking.", state: "done" },
          {
            type: "tool-weather",
            toolCallId: "w1",
            state: "output-available",
            input: { city: "Paris" },
            output: { temp: 20 },
          },
          {
            type: "tool-weather",
            toolCallId: "w2",
            state: "output-error",
            input: { city: "X" },
            errorText: "no city",
          },
          { type: "step-start" },
          { type: "text", text: "Sunny.", state: "done" },
        ],
      },
    ];
    const session = new SessionBuilder(inMemoryBackend(temporary.database)).forSession("ui").build();
    for (const message of ui) await session.appendMessage(message);
    const loaded = await new SessionHistoryPlugin("history", { session }).getMessages("ui");
    expect(JSON.parse(JSON.stringify(loaded))).toEqual(
      JSON.parse(JSON.stringify(await convertToModelMessages(ui))),
    );
    expect(loaded.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });
});
