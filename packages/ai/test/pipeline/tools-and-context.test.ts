import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { InMemoryRunStateStore } from "../../../sessions/src/memory/index.js";
import {
  type ContextPlugin,
  contextBlocksPlugin,
  contextMiddleware,
  contextPipeline,
  InMemoryHistoryPlugin,
} from "../../src/index.js";
import {
  answer,
  callTools,
  createContext,
  createStore,
  SKILLS,
  scriptedModel,
  scriptedStreamModel,
} from "../helpers.js";
import { conversation, describe as describeMessage } from "./helpers.js";

const weather = tool({
  description: "The weather in a city",
  inputSchema: jsonSchema<{ city: string }>({
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  }),
  execute: async ({ city }) => `Sunny in ${city}.`,
});

/** Offers the weather tool on calls whose input mentions the weather. */
const weatherProvider: ContextPlugin = {
  sourceId: "weather",
  beforeCall(run) {
    run.extendTools("weather", { weather });
  },
};

describe("extendTools", () => {
  it("lets the SDK run a tool it was given, and fails naming the tool and provider when it was not", async () => {
    const model = scriptedModel([
      callTools(0, { toolName: "weather", input: { city: "Lyon" } }),
      answer("It is sunny."),
    ]);
    const wrapped = contextPipeline({ model, plugins: [weatherProvider] });
    const result = await generateText({
      model: wrapped.model,
      tools: { weather },
      prompt: "Weather in Lyon?",
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]?.toolResults[0]?.output).toBe("Sunny in Lyon.");

    await expect(generateText({ model: wrapped.model, prompt: "Weather?" })).rejects.toThrow(
      'Tool "weather" (offered by plugin "weather") is not among the tools given to generateText',
    );
  });

  it("refuses to be called after the model call, naming the provider", async () => {
    const late: ContextPlugin = {
      sourceId: "late",
      afterCall(run) {
        run.extendInstructions("late", "too late");
      },
    };
    const pipeline = contextPipeline({ model: scriptedModel([answer("x")]), plugins: [late] });
    await expect(generateText({ model: pipeline.model, prompt: "hi" })).rejects.toThrow(
      'Plugin "late" failed in afterCall: extendInstructions only works in beforeCall',
    );
  });

  it("allows one frozen prompt per call", async () => {
    const context = createContext(createStore());
    const pipeline = contextPipeline({
      model: scriptedModel([answer("x")]),
      context,
      plugins: [
        contextBlocksPlugin(createContext(createStore()), {
          sourceId: "second",
          tools: {
            exclude: ["set_context", "edit_context", "search_context", "load_context", "unload_context"],
          },
        }),
      ],
    });
    await expect(
      generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "hi" }),
    ).rejects.toThrow('Two plugins set the frozen prompt ("contextblocks" and "second")');
  });
});

describe("the ContextBlocks plugin", () => {
  it("replaces an unloaded skill in the loaded history with its placeholder on the next turn", async () => {
    const store = createStore();
    const history = new InMemoryHistoryPlugin("memory");
    const model = scriptedModel([
      callTools(0, { toolName: "load_context", input: { label: "skills", key: "pdf-forms" } }),
      callTools(1, { toolName: "unload_context", input: { label: "skills", key: "pdf-forms" } }),
      answer("Form filled."),
      answer("Anything else?"),
    ]);
    const pipeline = contextPipeline({ model, context: createContext(store), plugins: [history] });

    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "Fill my PDF form.",
      stopWhen: stepCountIs(5),
    });
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Thanks." });

    const sent = JSON.stringify(model.doGenerateCalls[3]?.prompt);
    expect(sent).toContain("[unloaded: pdf-forms from skills]");
    expect(sent).not.toContain(SKILLS["pdf-forms"].content);
    // The history keeps the real result: the placeholder is what the model sees, not what is stored.
    expect(JSON.stringify(history.messages("default"))).toContain(SKILLS["pdf-forms"].content);
  });

  it("works as middleware alone with wrapLanguageModel and streamText, over a multi-step loop", async () => {
    const store = createStore();
    const history = new InMemoryHistoryPlugin("memory");
    const middleware = contextMiddleware({
      context: createContext(store),
      plugins: [history],
      stateStore: new InMemoryRunStateStore(),
    });
    const model = scriptedStreamModel([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Likes jazz." } }),
      answer("Noted: jazz."),
    ]);
    const { wrapLanguageModel } = await import("ai");
    const result = streamText({
      model: wrapLanguageModel({ model, middleware }),
      tools: middleware.tools,
      prompt: "I like jazz.",
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toBe("Noted: jazz.");
    expect(store.blocks.get("memory")).toBe("Likes jazz.");
    expect(conversation(model.doStreamCalls[1])).toEqual([
      "user: I like jazz.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
    ]);
    expect(history.messages("default").map(describeMessage)).toEqual([
      "user: I like jazz.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "assistant: Noted: jazz.",
    ]);
  });
});

describe("state of providers not configured today", () => {
  it("is kept when another provider saves", async () => {
    const stateStore = new InMemoryRunStateStore();
    await stateStore.save("default", { retired: { note: "keep me" } });
    const counting: ContextPlugin = {
      sourceId: "counting",
      afterCall(run) {
        run.state.calls = 1;
      },
    };
    const pipeline = contextPipeline({
      model: scriptedModel([answer("x")]),
      stateStore,
      plugins: [counting],
    });
    await generateText({ model: pipeline.model, prompt: "hi" });
    expect(await stateStore.load("default")).toEqual({
      retired: { note: "keep me" },
      counting: { calls: 1 },
    });
  });
});
