import { generateText, stepCountIs, streamText, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import {
  contextMiddleware,
  contextPipeline,
  InMemoryHistoryPlugin,
  isReminderPart,
} from "../../src/index.js";
import { comparePrefix } from "../../src/test.js";
import {
  answer,
  callTools,
  createContext,
  createStore,
  scriptedModel,
  scriptedStreamModel,
} from "../helpers.js";
import {
  conversation,
  describe as describeMessage,
  recordingProvider,
  systemMessages,
  user,
} from "./helpers.js";

describe("contextMiddleware: what the model receives, in which order", () => {
  it("sends the frozen prompt first, the caller's system next, then provider instructions in provider order; afterCall in reverse", async () => {
    const context = createContext(createStore());
    const log: string[] = [];
    const model = scriptedModel([answer("Hello.")]);
    const pipeline = contextPipeline({
      model,
      context,
      plugins: [
        recordingProvider("first", log, { instructions: "First instruction." }),
        recordingProvider("second", log, {
          instructions: "Second instruction.",
          messages: [user("Context from second.")],
        }),
      ],
    });

    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      system: "Caller system.",
      prompt: "Hi",
    });

    const call = model.doGenerateCalls[0];
    expect(systemMessages(call)).toEqual([
      await context.freezeSystemPrompt(),
      "Caller system.",
      "First instruction.",
      "Second instruction.",
    ]);
    expect(conversation(call)).toEqual(["user: Context from second.", "user: Hi"]);
    expect(log).toEqual([
      "first.beforeCall",
      "second.beforeCall",
      "second.afterCall(1 in, 1 out)",
      "first.afterCall(1 in, 1 out)",
    ]);
    // The tools the SDK ran are the context's, byte for byte.
    expect(call?.tools?.map((tool) => tool.name)).toEqual(Object.keys(pipeline.tools));
  });

  it("puts loaded history before other providers' messages and the input, and the reminder on the newest user message, never stored", async () => {
    let today = "Mon";
    const context = createContext(createStore(), [], { today: () => today });
    const history = new InMemoryHistoryPlugin("memory");
    const model = scriptedModel([answer("One."), answer("Two.")]);
    const pipeline = contextPipeline({
      model,
      context,
      plugins: [history, recordingProvider("rag", [], { messages: [user("Retrieved note.")] })],
    });

    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "First question" });
    today = "Tue";
    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Second question" });

    const second = model.doGenerateCalls[1];
    const sent = conversation(second);
    expect(sent.slice(0, 3)).toEqual(["user: First question", "assistant: One.", "user: Retrieved note."]);
    expect(sent[3]).toMatch(/^user: Second question \| /);
    const last = second?.prompt.at(-1);
    const reminder = last?.role === "user" ? last.content.at(-1) : undefined;
    expect(reminder?.type === "text" && isReminderPart(reminder)).toBe(true);
    expect(reminder?.type === "text" ? reminder.text : "").toContain("Today is Tue.");

    // What the history holds: the caller's words and the answers, no reminder, no provider context.
    expect(history.messages("default").map(describeMessage)).toEqual([
      "user: First question",
      "assistant: One.",
      "user: Second question",
      "assistant: Two.",
    ]);
  });

  it("stores a tool loop once: each step's new messages, the SDK's rendering of a stored response skipped", async () => {
    const store = createStore();
    const context = createContext(store);
    const history = new InMemoryHistoryPlugin("memory");
    const log: string[] = [];
    const model = scriptedModel([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Name: Ada." } }),
      answer("Noted, Ada."),
      answer("You are Ada."),
    ]);
    const pipeline = contextPipeline({ model, context, plugins: [history, recordingProvider("log", log)] });

    const first = await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "I'm Ada.",
      stopWhen: stepCountIs(3),
    });
    expect(first.text).toBe("Noted, Ada.");
    expect(store.blocks.get("memory")).toBe("Name: Ada.");
    // Step 2 sent the same prefix as step 1 (history, input) plus the step's messages: no duplicates.
    expect(conversation(model.doGenerateCalls[1])).toEqual([
      "user: I'm Ada.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
    ]);
    // Each step is a run: the first brings the user's message, the second the tool result.
    expect(log).toEqual([
      "log.beforeCall",
      "log.afterCall(1 in, 1 out)",
      "log.beforeCall",
      "log.afterCall(1 in, 1 out)",
    ]);

    await generateText({ model: pipeline.model, tools: pipeline.tools, prompt: "Who am I?" });
    expect(history.messages("default").map(describeMessage)).toEqual([
      "user: I'm Ada.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "assistant: Noted, Ada.",
      "user: Who am I?",
      "assistant: You are Ada.",
    ]);
    // The stored messages are byte for byte what the SDK sent in the loop: the next turn's cache holds.
    const [, lastStep, nextTurn] = model.doGenerateCalls;
    expect((await comparePrefix(lastStep!, nextTurn!)).messages).toEqual({
      sharedPrefix: 3,
      previousCount: 3,
    });
    expect(conversation(model.doGenerateCalls[2])).toEqual(
      history.messages("default").slice(0, 5).map(describeMessage),
    );
  });

  it("takes the tool results of a loop cut after a tool step with the next message, as the README says", async () => {
    const context = createContext(createStore());
    const history = new InMemoryHistoryPlugin("memory");
    const model = scriptedModel([
      callTools(0, { toolName: "set_context", input: { label: "memory", content: "Name: Ada." } }),
      answer("Hello Ada."),
    ]);
    const pipeline = contextPipeline({ model, context, plugins: [history] });
    const cut = await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "I'm Ada.",
      stopWhen: stepCountIs(1),
    });
    expect(cut.finishReason).toBe("tool-calls");
    // The results ran after the last model call, so no call carried them yet: they come with the next one.
    const pending = cut.finishReason === "tool-calls" ? cut.response.messages.slice(-1) : [];
    await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      messages: [...pending, { role: "user", content: "Hi?" }],
    });
    const roles = history.messages("default").map((message) => message.role);
    expect(roles).toEqual(["user", "assistant", "tool", "user", "assistant"]);
    expect(conversation(model.doGenerateCalls[1]).slice(0, 4)).toEqual([
      "user: I'm Ada.",
      "assistant: [tool-call set_context]",
      "tool: [tool-result set_context]",
      "user: Hi?",
    ]);
  });

  it("keeps sessions apart: a call names its session in providerOptions", async () => {
    const history = new InMemoryHistoryPlugin("memory");
    const model = scriptedModel([answer("A."), answer("B."), answer("A again.")]);
    const wrapped = wrapLanguageModel({ model, middleware: contextMiddleware({ plugins: [history] }) });
    const session = (sessionId: string) => ({ contextblocks: { sessionId } });

    await generateText({ model: wrapped, prompt: "to a", providerOptions: session("a") });
    await generateText({ model: wrapped, prompt: "to b", providerOptions: session("b") });
    await generateText({ model: wrapped, prompt: "a again", providerOptions: session("a") });

    expect(conversation(model.doGenerateCalls[2])).toEqual(["user: to a", "assistant: A.", "user: a again"]);
    expect(history.messages("b").map(describeMessage)).toEqual(["user: to b", "assistant: B."]);
    // The pipeline's own option does not reach the provider.
    expect(model.doGenerateCalls[0]?.providerOptions?.contextblocks).toBeUndefined();
  });

  it("runs afterCall once per streamed call, after the stream finished, with the whole response", async () => {
    const history = new InMemoryHistoryPlugin("memory");
    const seen: string[] = [];
    let streamDone = false;
    const model = scriptedStreamModel([answer("Streamed answer."), answer("Second.")]);
    const pipeline = contextPipeline({
      model,
      plugins: [
        history,
        {
          sourceId: "watcher",
          afterCall(run) {
            seen.push(`${streamDone}:${run.responseMessages.map(describeMessage).join(",")}`);
          },
        },
      ],
    });

    const result = streamText({ model: pipeline.model, prompt: "Stream please" });
    const chunks: string[] = [];
    for await (const chunk of result.textStream) chunks.push(chunk);
    streamDone = true;
    expect(chunks.join("")).toBe("Streamed answer.");
    expect(seen).toEqual(["false:assistant: Streamed answer."]);
    expect(history.messages("default").map(describeMessage)).toEqual([
      "user: Stream please",
      "assistant: Streamed answer.",
    ]);

    const next = streamText({ model: pipeline.model, prompt: "Again" });
    expect(await next.text).toBe("Second.");
    expect(conversation(model.doStreamCalls[1])).toEqual([
      "user: Stream please",
      "assistant: Streamed answer.",
      "user: Again",
    ]);
  });
});
