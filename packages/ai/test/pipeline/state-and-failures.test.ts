import { ContextError } from "@contextblocks/core";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { InMemoryRunStateStore } from "../../../sessions/src/memory/index.js";
import {
  type ContextPlugin,
  contextPipeline,
  InMemoryHistoryPlugin,
  messageText,
  type RunMessage,
} from "../../src/index.js";
import { assertStablePrefix } from "../../src/test.js";
import {
  answer,
  callTools,
  createContext,
  createStore,
  scriptedModel,
  scriptedStreamModel,
} from "../helpers.js";
import { describe as describeMessage, systemMessages } from "./helpers.js";

/** Counts calls in its state and says so in an instruction: state read before, changed after. */
function counter(sourceId = "counter"): ContextPlugin {
  return {
    sourceId,
    beforeCall(run) {
      run.extendInstructions(sourceId, `Calls so far: ${Number(run.state.calls ?? 0)}.`);
    },
    afterCall(run) {
      run.state.calls = Number(run.state.calls ?? 0) + 1;
    },
  };
}

describe("state persisted through a RunStateStore", () => {
  it("carries a provider's state across calls and across a restart (new middleware, same store)", async () => {
    const stateStore = new InMemoryRunStateStore();
    const sessions = new Map<string, RunMessage[]>();
    const model = scriptedModel([answer("1"), answer("2"), answer("3")]);
    const start = () =>
      contextPipeline({
        model,
        stateStore,
        plugins: [new InMemoryHistoryPlugin("memory", { sessions }), counter()],
      });

    let pipeline = start();
    await generateText({ model: pipeline.model, prompt: "a" });
    await generateText({ model: pipeline.model, prompt: "b" });
    pipeline = start(); // a restart: nothing carried in memory but the two stores
    await generateText({ model: pipeline.model, prompt: "c" });

    expect(model.doGenerateCalls.map((call) => systemMessages(call))).toEqual([
      ["Calls so far: 0."],
      ["Calls so far: 1."],
      ["Calls so far: 2."],
    ]);
    expect(await stateStore.load("default")).toEqual({ counter: { calls: 3 } });
    expect(model.doGenerateCalls[2]?.prompt.map((message) => describeMessage(message))).toEqual([
      "system: Calls so far: 2.",
      "user: a",
      "assistant: 1",
      "user: b",
      "assistant: 2",
      "user: c",
    ]);
  });

  it("keeps the cached prefix byte-identical across turns, writes and a restart", async () => {
    const store = createStore();
    const stateStore = new InMemoryRunStateStore();
    const sessions = new Map<string, RunMessage[]>();
    const model = scriptedModel([
      answer("Hi."),
      callTools(1, { toolName: "set_context", input: { label: "memory", content: "Likes tea." } }),
      answer("Noted."),
      answer("Tea."),
    ]);
    const start = () =>
      contextPipeline({
        model,
        context: createContext(store),
        stateStore,
        plugins: [new InMemoryHistoryPlugin("memory", { sessions })],
      });
    let pipeline = start();
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Hello" });
    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "I like tea",
      stopWhen: stepCountIs(3),
    });
    pipeline = start();
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "What do I like?" });

    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(4);
    for (const later of calls.slice(1)) await assertStablePrefix(calls[0]!, later);
    expect(systemMessages(calls[3])[0]).not.toContain("Likes tea.");
    expect(store.blocks.get("memory")).toBe("Likes tea.");
  });
});

describe("a provider that throws", () => {
  function failing(step: "beforeCall" | "afterCall"): ContextPlugin {
    return {
      sourceId: "flaky",
      [step]: () => {
        throw new Error("database unreachable");
      },
    };
  }

  for (const step of ["beforeCall", "afterCall"] as const) {
    it(`fails the call in ${step} with an error naming the provider, and stores nothing`, async () => {
      const stateStore = new InMemoryRunStateStore();
      const history = new InMemoryHistoryPlugin("memory");
      const model = scriptedModel([answer("never kept")]);
      const pipeline = contextPipeline({
        model,
        stateStore,
        plugins: [history, counter(), failing(step)],
      });

      const error = await generateText({ model: pipeline.model, prompt: "hello" }).catch((caught) => caught);
      expect(error).toBeInstanceOf(ContextError);
      expect(error).toMatchObject({
        code: "PLUGIN_FAILED",
        message: `Plugin "flaky" failed in ${step}: database unreachable`,
      });
      expect((error as Error).cause).toBeInstanceOf(Error);
      expect(model.doGenerateCalls).toHaveLength(step === "beforeCall" ? 0 : 1);
      expect(history.messages("default")).toEqual([]);
      expect(await stateStore.load("default")).toBeNull();
    });
  }

  it("names the plugin when it throws a value with no string form", async () => {
    const stateStore = new InMemoryRunStateStore();
    const model = scriptedModel([answer("never kept")]);
    const pipeline = contextPipeline({
      model,
      stateStore,
      plugins: [
        {
          sourceId: "odd",
          beforeCall: () => {
            // String() of an object without a prototype throws: the guard must not.
            throw Object.create(null);
          },
        },
      ],
    });
    const error = await generateText({ model: pipeline.model, prompt: "hello" }).catch((caught) => caught);
    expect(error).toBeInstanceOf(ContextError);
    expect(error).toMatchObject({
      code: "PLUGIN_FAILED",
      message: 'Plugin "odd" failed in beforeCall: an object',
    });
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it("refuses malformed messages and tools from a plugin before the model call, naming the plugin and the message", async () => {
    const cases: { plugin: ContextPlugin; message: string }[] = [
      {
        plugin: {
          sourceId: "odd",
          beforeCall: (run) => run.extendMessages("odd", [{ role: "bogus", content: "x" } as never]),
        },
        message:
          'Plugin "odd" failed in beforeCall: extendMessages("odd"): message 0 has role "bogus"; a role is system, user, assistant or tool.',
      },
      {
        plugin: {
          sourceId: "odd",
          beforeCall: (run) => run.extendMessages("odd", [{ role: "user", content: "ok" }, null as never]),
        },
        message:
          'Plugin "odd" failed in beforeCall: extendMessages("odd"): message 1 is null, not a message.',
      },
      {
        plugin: {
          sourceId: "odd",
          beforeCall: (run) => run.extendMessages("odd", [{ role: "user", content: 5 } as never]),
        },
        message:
          'Plugin "odd" failed in beforeCall: extendMessages("odd"): message 0 has content number 5; content is text or an array of parts.',
      },
      {
        plugin: {
          sourceId: "odd",
          beforeCall: (run) => run.extendMessages("odd", [{ role: "tool", content: "done" } as never]),
        },
        message:
          'Plugin "odd" failed in beforeCall: extendMessages("odd"): message 0 (tool) has text content; a tool message\'s content is an array of tool results.',
      },
      {
        plugin: { sourceId: "odd", beforeCall: (run) => run.extendTools("odd", 5 as never) },
        message:
          'Plugin "odd" failed in beforeCall: extendTools("odd"): the tools must be an object of tools by name, got number 5.',
      },
      {
        plugin: { sourceId: "odd", beforeCall: (run) => run.extendTools("odd", { look: null } as never) },
        message: 'Plugin "odd" failed in beforeCall: extendTools("odd"): tool "look" is null, not a tool.',
      },
      {
        plugin: {
          sourceId: "odd",
          beforeCall: (run) => run.transformMessages("odd", () => undefined as never),
        },
        message:
          'Plugin "odd" failed in transformMessages: transformMessages("odd") needs the messages as an array, got undefined.',
      },
      {
        plugin: {
          sourceId: "odd",
          beforeCall: (run) =>
            run.transformMessages("odd", (messages) =>
              messages.map((message) => ({ ...message, content: [{ text: "no type" }] }) as never),
            ),
        },
        message:
          'Plugin "odd" failed in transformMessages: transformMessages("odd"): message 0 has part 0 an object without a type.',
      },
      {
        plugin: {
          sourceId: "odd",
          getMessages: async () => [{ role: "assistant" }] as never,
          saveMessages: async () => undefined,
        } as ContextPlugin,
        message:
          'Plugin "odd" failed in getMessages: getMessages of "odd": message 0 has content undefined; content is text or an array of parts.',
      },
    ];
    for (const { plugin, message } of cases) {
      const stateStore = new InMemoryRunStateStore();
      const history = new InMemoryHistoryPlugin("memory");
      const model = scriptedModel([answer("never kept")]);
      const plugins = "getMessages" in plugin ? [plugin, counter()] : [history, counter(), plugin];
      const pipeline = contextPipeline({ model, stateStore, plugins });
      const error = await generateText({ model: pipeline.model, prompt: "hello" }).catch((caught) => caught);
      expect(error).toBeInstanceOf(ContextError);
      expect(error).toMatchObject({ code: "PLUGIN_FAILED", message });
      expect(model.doGenerateCalls).toHaveLength(0);
      expect(history.messages("default")).toEqual([]);
      expect(await stateStore.load("default")).toBeNull();
    }
  });

  it("names the plugin whose state JSON cannot hold, and stores nothing", async () => {
    for (const value of [
      10n,
      (() => {
        const cycle: Record<string, unknown> = {};
        cycle.self = cycle;
        return cycle;
      })(),
    ]) {
      const stateStore = new InMemoryRunStateStore();
      const history = new InMemoryHistoryPlugin("memory");
      const model = scriptedModel([answer("never kept")]);
      const odd: ContextPlugin = {
        sourceId: "odd",
        afterCall: (run) => {
          run.state.value = value as never;
        },
      };
      const pipeline = contextPipeline({ model, stateStore, plugins: [history, counter(), odd] });
      const error = await generateText({ model: pipeline.model, prompt: "hello" }).catch((caught) => caught);
      expect(error).toBeInstanceOf(ContextError);
      expect(error).toMatchObject({ code: "PLUGIN_FAILED" });
      expect((error as Error).message).toMatch(
        /^Plugin "odd"'s state cannot be saved as JSON: .+; nothing was stored$/s,
      );
      expect(history.messages("default")).toEqual([]);
      expect(await stateStore.load("default")).toBeNull();
    }
  });

  it("reports a failing afterCall in a stream as an error part, and stores nothing", async () => {
    const stateStore = new InMemoryRunStateStore();
    const history = new InMemoryHistoryPlugin("memory");
    const pipeline = contextPipeline({
      model: scriptedStreamModel([answer("streamed")]),
      stateStore,
      plugins: [history, counter(), failing("afterCall")],
    });
    const errors: unknown[] = [];
    const result = streamText({
      model: pipeline.model,
      prompt: "hello",
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "PLUGIN_FAILED", message: expect.stringContaining('"flaky"') });
    expect(history.messages("default")).toEqual([]);
    expect(await stateStore.load("default")).toBeNull();
  });

  it("stores nothing when the model call fails", async () => {
    const stateStore = new InMemoryRunStateStore();
    const history = new InMemoryHistoryPlugin("memory");
    const pipeline = contextPipeline({
      model: scriptedModel([]),
      stateStore,
      plugins: [history, counter()],
    });
    await expect(generateText({ model: pipeline.model, prompt: "hello", maxRetries: 0 })).rejects.toThrow(
      "ran out of steps",
    );
    expect(history.messages("default")).toEqual([]);
    expect(await stateStore.load("default")).toBeNull();
  });
});

describe("configuration errors", () => {
  const model = scriptedModel([]);

  it("refuses two loading history plugins, naming both", () => {
    expect(() =>
      contextPipeline({
        model,
        plugins: [new InMemoryHistoryPlugin("primary"), new InMemoryHistoryPlugin("second")],
      }),
    ).toThrow(/Two history plugins load messages \("primary" and "second"\)/);
    // One loading and one audit: the pattern of Microsoft Agent Framework's samples.
    expect(() =>
      contextPipeline({
        model,
        plugins: [
          new InMemoryHistoryPlugin("primary"),
          new InMemoryHistoryPlugin("audit", { loadMessages: false, storeContextMessages: true }),
        ],
      }),
    ).not.toThrow();
  });

  it("refuses a plugin whose tools are not an object of tools by name, naming it", () => {
    expect(() => contextPipeline({ model, plugins: [{ sourceId: "odd", tools: 5 as never }] })).toThrow(
      'Plugin "odd": the tools must be an object of tools by name, got number 5.',
    );
    expect(() =>
      contextPipeline({ model, plugins: [{ sourceId: "odd", tools: { look: "x" } as never }] }),
    ).toThrow('Plugin "odd": tool "look" is "x", not a tool.');
  });

  it("refuses a repeated sourceId and two different tools under one name", () => {
    expect(() => contextPipeline({ model, plugins: [counter("same"), counter("same")] })).toThrow(
      'Two plugins have the sourceId "same"',
    );
    const weather = (description: string) =>
      tool({ description, inputSchema: jsonSchema({ type: "object" }), execute: async () => "sunny" });
    expect(() =>
      contextPipeline({
        model,
        plugins: [
          { sourceId: "a", tools: { weather: weather("A") } },
          { sourceId: "b", tools: { weather: weather("B") } },
        ],
      }),
    ).toThrow('Two tools are named "weather": plugins "a" and "b"');
  });

  it("fails a call whose tools the SDK was not given, or was given a different tool of that name", async () => {
    const context = createContext(createStore());
    const pipeline = contextPipeline({ model: scriptedModel([answer("x"), answer("y")]), context });
    await expect(generateText({ model: pipeline.model, prompt: "hi" })).rejects.toThrow(
      /Tool "set_context" \(offered by plugin "contextblocks"\) is not among the tools given to generateText/,
    );
    const impostor = tool({
      description: "Something else",
      inputSchema: jsonSchema({ type: "object" }),
      execute: async () => "",
    });
    await expect(
      generateText({
        model: pipeline.model,
        tools: { ...pipeline.tools, set_context: impostor },
        prompt: "hi",
      }),
    ).rejects.toThrow('Two tools are named "set_context"');
  });
});

describe("the audit pattern of Microsoft Agent Framework's samples", () => {
  it("stores other providers' context messages with input and output in the audit, not in the primary", async () => {
    const primary = new InMemoryHistoryPlugin("primary");
    const audit = new InMemoryHistoryPlugin("audit", { loadMessages: false, storeContextMessages: true });
    const rag: ContextPlugin = {
      sourceId: "rag",
      beforeCall(run) {
        run.extendMessages("rag", [{ role: "user", content: "Note: the office closes at 6." }]);
      },
    };
    const pipeline = contextPipeline({
      model: scriptedModel([answer("At 6."), answer("Yes.")]),
      plugins: [primary, audit, rag],
    });
    await generateText({ model: pipeline.model, prompt: "When do you close?" });
    await generateText({ model: pipeline.model, prompt: "Sure?" });
    expect(primary.messages("default").map(messageText)).toEqual([
      "When do you close?",
      "At 6.",
      "Sure?",
      "Yes.",
    ]);
    expect(audit.messages("default").map(messageText)).toEqual([
      "Note: the office closes at 6.",
      "When do you close?",
      "At 6.",
      "Note: the office closes at 6.",
      "Sure?",
      "Yes.",
    ]);
  });
});

describe("history flags", () => {
  it("store only what each provider asks for", async () => {
    const inputsOnly = new InMemoryHistoryPlugin("inputs", { loadMessages: false, storeOutputs: false });
    const outputsOnly = new InMemoryHistoryPlugin("outputs", { loadMessages: false, storeInputs: false });
    const pipeline = contextPipeline({
      model: scriptedModel([answer("Reply.")]),
      plugins: [inputsOnly, outputsOnly],
    });
    await generateText({ model: pipeline.model, prompt: "Question." });
    expect(inputsOnly.messages("default").map(messageText)).toEqual(["Question."]);
    expect(outputsOnly.messages("default").map(messageText)).toEqual(["Reply."]);
  });
});

describe("plugin source ids that are Object's own names", () => {
  it("a plugin named __proto__ or constructor gets its own state, kept across calls", async () => {
    const stateStore = new InMemoryRunStateStore();
    const model = scriptedModel([answer("1"), answer("2")]);
    const pipeline = contextPipeline({
      model,
      stateStore,
      plugins: [counter("__proto__"), counter("constructor")],
    });
    await generateText({ model: pipeline.model, prompt: "a" });
    await generateText({ model: pipeline.model, prompt: "b" });
    expect(systemMessages(model.doGenerateCalls[1])).toEqual(["Calls so far: 1.", "Calls so far: 1."]);
    const saved = await stateStore.load("default");
    expect(Object.getOwnPropertyNames(saved).sort()).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(Object.prototype)).toBeNull();
    expect((Object.prototype as { calls?: unknown }).calls).toBeUndefined();
  });
});
