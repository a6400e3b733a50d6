import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { streamText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";

/** A stream that sends one text delta, then waits until the call is aborted. */
function hangingModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async ({ abortSignal }) => ({
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          controller.enqueue({ type: "stream-start", warnings: [] });
          controller.enqueue({ type: "text-start", id: "t" });
          controller.enqueue({ type: "text-delta", id: "t", delta: "Let me think" });
          abortSignal?.addEventListener("abort", () => controller.error(abortSignal.reason));
        },
      }),
    }),
  });
}

describe("the pipeline stores each turn once, whole", () => {
  it("an aborted streamText keeps the caller's user message in the session", async () => {
    const session = new SessionBuilder(inMemoryBackend()).forSession("chat").build();
    const pipeline = contextPipeline({ model: hangingModel(), session });
    const abort = new AbortController();
    const result = streamText({
      model: pipeline.model,
      prompt: "summarise the incident report",
      abortSignal: abort.signal,
    });
    const read = async () => {
      for await (const delta of result.textStream) {
        expect(delta).toBe("Let me think");
        abort.abort(new Error("the user pressed stop"));
      }
    };
    await read().catch((error: unknown) => expect(String(error)).toMatch(/pressed stop/));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const history = await session.getHistory();
    expect(history.map((message) => [message.role, message.parts[0]?.text])).toEqual([
      ["user", "summarise the incident report"],
    ]);
  });
});

describe("a failing state save", () => {
  it("fails the call before the turn is stored, so a retry stores it once", async () => {
    const { generateText } = await import("ai");
    const { InMemoryRunStateStore } = await import("@contextblocks/sessions/memory");
    const { answer, scriptedModel } = await import("../helpers.js");
    let failNext = true;
    const runState = new (class extends InMemoryRunStateStore {
      override async save(sessionId: string, states: Record<string, Record<string, unknown>>) {
        if (failNext) {
          failNext = false;
          throw new Error("state store unavailable");
        }
        return super.save(sessionId, states);
      }
    })();
    const backend = inMemoryBackend({ runState });
    const session = new SessionBuilder(backend).forSession("chat").build();
    const counter = {
      sourceId: "counter",
      afterCall(run: { state: Record<string, unknown> }) {
        run.state.calls = Number(run.state.calls ?? 0) + 1;
      },
    };
    const model = scriptedModel([answer("first try"), answer("second try")]);
    const pipeline = contextPipeline({ model, session, plugins: [counter] });
    await expect(generateText({ model: pipeline.model, prompt: "book the flight" })).rejects.toThrow(
      /state store unavailable/,
    );
    await generateText({ model: pipeline.model, prompt: "book the flight" });
    const history = await session.getHistory();
    expect(history.map((message) => [message.role, message.parts[0]?.text])).toEqual([
      ["user", "book the flight"],
      ["assistant", "second try"],
    ]);
    expect(await runState.load("chat")).toEqual({ counter: { calls: 1 } });
  });
});

describe("two overlapping calls of one session", () => {
  it("store each user message and tool call once", async () => {
    const { generateText, jsonSchema, stepCountIs, tool } = await import("ai");
    // Answers by the prompt: a tool call first, the answer once the tool result is there.
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        const last = prompt.at(-1);
        const usage = {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        };
        if (last?.role === "tool") {
          return {
            content: [{ type: "text", text: "done" }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: [],
          };
        }
        const user = JSON.stringify(last?.content);
        return {
          content: [
            {
              type: "tool-call",
              toolCallId: `call-${user.includes("first") ? 1 : 2}`,
              toolName: "lookup",
              input: "{}",
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      },
    });
    const session = new SessionBuilder(inMemoryBackend()).forSession("chat").build();
    const pipeline = contextPipeline({ model, session });
    const lookup = tool({
      inputSchema: jsonSchema({ type: "object" }),
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 40));
        return "42";
      },
    });
    const ask = (prompt: string) =>
      generateText({ model: pipeline.model, prompt, tools: { lookup }, stopWhen: stepCountIs(3) });
    await Promise.all([ask("first question"), ask("second question")]);
    const history = await session.store.getTree();
    const texts = await Promise.all(
      history.map(async (node) => JSON.stringify(await session.store.getMessage(node.id))),
    );
    expect(texts.filter((text) => text.includes("first question"))).toHaveLength(1);
    expect(texts.filter((text) => text.includes("second question"))).toHaveLength(1);
    // The tool call itself (a UI tool part), stored once per call.
    expect(texts.filter((text) => text.includes('"type":"tool-lookup","toolCallId":"call-1"'))).toHaveLength(
      1,
    );
    expect(texts.filter((text) => text.includes('"type":"tool-lookup","toolCallId":"call-2"'))).toHaveLength(
      1,
    );
  });
});

describe("a tool call with invalid JSON input", () => {
  it("replays on the next turn as the SDK sent it, so the cached prefix holds", async () => {
    const { generateText, jsonSchema, stepCountIs, tool } = await import("ai");
    const { answer, scriptedModel } = await import("../helpers.js");
    const invalid = {
      content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: '{"city": "Par' }],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: answer("x").usage,
      warnings: [],
    } as unknown as ReturnType<typeof answer>;
    const model = scriptedModel([invalid, answer("sorry"), answer("next")]);
    const session = new SessionBuilder(inMemoryBackend()).forSession("chat").build();
    const pipeline = contextPipeline({ model, session });
    const lookup = tool({ inputSchema: jsonSchema({ type: "object" }), execute: async () => "42" });
    await generateText({
      model: pipeline.model,
      prompt: "weather?",
      tools: { lookup },
      stopWhen: stepCountIs(2),
    });
    await generateText({ model: pipeline.model, prompt: "again", tools: { lookup } });
    const [, second, third] = model.doGenerateCalls.map((call) => call.prompt);
    // What the SDK sent on its second step is the start of the next turn's prompt, byte for byte (but for the
    // prompt-cache breakpoints, which move to the newest message on every call: cache-hints.ts).
    expect(withoutCacheHints(third?.slice(0, second?.length))).toBe(withoutCacheHints(second));
  });
});

/** The prompt as JSON without Anthropic `cacheControl` and Bedrock `cachePoint` provider options. */
function withoutCacheHints(prompt: unknown): string {
  return JSON.stringify(prompt, (key, value) => {
    if (key !== "providerOptions" || typeof value !== "object" || value === null) return value;
    const { anthropic: _anthropic, bedrock: _bedrock, ...rest } = value as Record<string, unknown>;
    return Object.keys(rest).length > 0 ? rest : undefined;
  });
}
