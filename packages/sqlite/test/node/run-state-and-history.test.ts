// SqliteRunStateStore through a real pipeline. The history plugin's own tests run in @contextblocks/ai
// (test/sessions/history-plugin.test.ts); its round trip on every backend in tests/backends.
import { type ContextPlugin, contextPipeline, SessionHistoryPlugin } from "@contextblocks/ai";
import { ContextBlocks, isContextError } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { SessionBuilder } from "@contextblocks/sessions";
import { answer, scriptedModel } from "@contextblocks/test-kit/model";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { generateText, type LanguageModel } from "ai";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteRunStateStore, sqliteBackend } from "../../src/index.js";

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

/** What a process builds on start: a session on the database and a pipeline whose history is that session. */
function start(
  database: Database.Database,
  model: LanguageModel & Parameters<typeof contextPipeline>[0]["model"],
  store: InMemoryStore,
  options: { today?: () => string; plugins?: ContextPlugin[] } = {},
) {
  const session = new SessionBuilder(sqliteBackend(database)).forSession("chat-1").build();
  const history = new SessionHistoryPlugin("history", { session });
  const pipeline = contextPipeline({
    model,
    context: createContext(store, options.today),
    plugins: [history, ...(options.plugins ?? [])],
    stateStore: new SqliteRunStateStore(database),
  });
  return { session, history, pipeline };
}

describe("SqliteRunStateStore", () => {
  /** Counts turns in its state and tells the model the count. */
  const counter: ContextPlugin = {
    sourceId: "counter",
    beforeCall(run) {
      run.extendInstructions("counter", `Turn ${Number(run.state.turns ?? 0) + 1}.`);
    },
    afterCall(run) {
      run.state.turns = Number(run.state.turns ?? 0) + 1;
    },
  };

  it("persists provider state in the session's database across a restart", async () => {
    const store = new InMemoryStore();
    const model = scriptedModel([answer("A."), answer("B."), answer("C.")]);
    const first = start(temporary.database, model, store, { plugins: [counter] });
    await generateText({ model: first.pipeline.model, tools: first.pipeline.tools, prompt: "one" });
    await generateText({ model: first.pipeline.model, tools: first.pipeline.tools, prompt: "two" });

    const database = temporary.reopen();
    expect(await new SqliteRunStateStore(database).load("default")).toEqual({ counter: { turns: 2 } });
    const second = start(database, model, store, { plugins: [counter] });
    await generateText({ model: second.pipeline.model, tools: second.pipeline.tools, prompt: "three" });
    const system = model.doGenerateCalls[2]!.prompt.filter((message) => message.role === "system");
    expect(system.at(-1)?.content).toBe("Turn 3.");
    const rows = database.prepare("SELECT session_id, source_id, state FROM contextblocks_run_state").all();
    expect(rows).toEqual([{ session_id: "default", source_id: "counter", state: '{"turns":3}' }]);
  });

  it("keeps sessions apart, drops a state that emptied, and leaves the other rows alone", async () => {
    const stateStore = new SqliteRunStateStore(temporary.database);
    expect(await stateStore.load("a")).toBeNull();
    await stateStore.save("a", { one: { x: 1 }, two: { y: 2 } });
    await stateStore.save("b", { one: { x: 9 } });
    await stateStore.save("a", { one: { x: 1 } });
    expect(await stateStore.load("a")).toEqual({ one: { x: 1 } });
    expect(await stateStore.load("b")).toEqual({ one: { x: 9 } });
    await stateStore.delete("a");
    expect(await stateStore.load("a")).toBeNull();
    expect(await stateStore.load("b")).toEqual({ one: { x: 9 } });
  });

  it("refuses bad input with a ContextError and keeps what was stored", async () => {
    const stateStore = new SqliteRunStateStore(temporary.database);
    await stateStore.save("a", { one: { x: 1 } });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(stateStore.save("a", { one: { x: 2 }, two: cyclic })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('"two"'),
    });
    await expect(stateStore.save("", {})).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(() => new SqliteRunStateStore(null as never)).toThrow(/expected a database/);
    expect(await stateStore.load("a")).toEqual({ one: { x: 1 } });

    // A hand-broken row fails the load by name instead of being read as empty (and overwritten).
    temporary.database.prepare("UPDATE contextblocks_run_state SET state = 'not json'").run();
    const failure = await stateStore.load("a").catch((error: unknown) => error);
    expect(isContextError(failure) && failure.code === "PROVIDER_FAILED").toBe(true);
    expect(String((failure as Error).message)).toContain('"one" in session "a"');
  });
});
