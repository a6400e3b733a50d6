import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { type Session, SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";
import { conversation } from "./helpers.js";

/** A promise with its resolve function, to let a step go on when the test says. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/**
 * A model that answers by the prompt: the slow question gets a tool call, a prompt ending in that tool's
 * result gets turn A's answer, anything else its own answer. `holdQuick` keeps the quick question's answer
 * until the test opens it.
 */
function scriptedModel(holdQuick?: Promise<void>) {
  const decide = async (options: LanguageModelV3CallOptions): Promise<LanguageModelV3Content[]> => {
    const last = options.prompt.at(-1);
    if (last?.role === "tool") return [{ type: "text", text: "A: the lighthouse is 42 metres tall" }];
    const text = JSON.stringify(last?.content ?? "");
    if (text.includes("slow")) {
      return [
        { type: "tool-call", toolCallId: "call-a", toolName: "measure", input: '{"what":"lighthouse"}' },
      ];
    }
    if (text.includes("quick")) {
      await holdQuick;
      return [{ type: "text", text: "B: the harbour opens at six" }];
    }
    return [{ type: "text", text: "C: noted" }];
  };
  const finishOf = (content: LanguageModelV3Content[]) =>
    content.some((part) => part.type === "tool-call")
      ? ({ unified: "tool-calls", raw: "tool_calls" } as const)
      : ({ unified: "stop", raw: "stop" } as const);
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const content = await decide(options);
      return { content, finishReason: finishOf(content), usage, warnings: [] };
    },
    doStream: async (options) => {
      const content = await decide(options);
      const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
      for (const part of content) {
        if (part.type === "text") {
          parts.push(
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: part.text },
            { type: "text-end", id: "t" },
          );
        } else parts.push(part as LanguageModelV3StreamPart);
      }
      parts.push({ type: "finish", finishReason: finishOf(content), usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}

/**
 * Why a prompt would be refused by OpenAI or Anthropic: a tool call not answered by the next message, or a
 * tool result with no call before it. `[]` for a prompt they accept.
 */
function refusals(prompt: LanguageModelV3CallOptions["prompt"]): string[] {
  const problems: string[] = [];
  prompt.forEach((message, index) => {
    if (message.role === "assistant") {
      const calls = message.content.flatMap((part) =>
        part.type === "tool-call" && part.providerExecuted !== true ? [part.toolCallId] : [],
      );
      const next = prompt[index + 1];
      const answered = new Set(
        next?.role === "tool"
          ? next.content.flatMap((part) => ("toolCallId" in part ? [part.toolCallId] : []))
          : [],
      );
      for (const call of calls) if (!answered.has(call)) problems.push(`call ${call} is not answered next`);
    }
    if (message.role === "tool") {
      const previous = prompt[index - 1];
      const calls = new Set(
        previous?.role === "assistant"
          ? previous.content.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : []))
          : [],
      );
      for (const part of message.content) {
        if ("toolCallId" in part && !calls.has(part.toolCallId)) {
          problems.push(`result ${part.toolCallId} has no call before it`);
        }
      }
    }
  });
  return problems;
}

type Run = (options: Parameters<typeof generateText>[0]) => Promise<unknown>;
const runners: [string, Run][] = [
  ["generateText", (options) => generateText(options)],
  [
    "streamText",
    async (options) => {
      const result = streamText(options as Parameters<typeof streamText>[0]);
      await result.consumeStream();
      return result.text;
    },
  ],
];

describe.each(runners)("two turns of one session overlapping (%s)", (_name, run) => {
  /** The session, its pipeline, and turn A's tool, which finishes when the test opens `toolDone`. */
  function setup(holdQuick?: Promise<void>) {
    const session = new SessionBuilder(inMemoryBackend()).forSession("chat").build();
    const model = scriptedModel(holdQuick);
    const pipeline = contextPipeline({ model, session });
    const toolStarted = gate();
    const toolDone = gate();
    const measure = tool({
      inputSchema: jsonSchema({ type: "object" }),
      execute: async () => {
        toolStarted.open();
        await toolDone.opened;
        return "42 metres";
      },
    });
    const ask = (prompt: string) =>
      run({ model: pipeline.model, prompt, tools: { measure }, stopWhen: stepCountIs(3) });
    return { session, model, ask, toolStarted, toolDone };
  }

  /** The stored transcript: each tool call is in its assistant message with its result. */
  async function storedCalls(session: Session) {
    return (await session.getHistory()).flatMap((message) =>
      message.parts.flatMap((part) =>
        typeof part.toolCallId === "string" ? [{ message: message.id, state: part.state }] : [],
      ),
    );
  }

  it("A's tool result after B's answer joins A's call; every later prompt is one providers accept", async () => {
    const { session, model, ask, toolStarted, toolDone } = setup();
    const turnA = ask("a slow question: how tall is the lighthouse?");
    await toolStarted.opened;
    await ask("a quick question: when does the harbour open?");
    toolDone.open();
    await turnA;
    await ask("thanks, note both");
    const prompts = model.doGenerateCalls.length > 0 ? model.doGenerateCalls : model.doStreamCalls;
    for (const call of prompts) expect(refusals(call.prompt)).toEqual([]);
    const next = prompts.at(-1);
    expect(conversation(next)).toEqual([
      "user: a slow question: how tall is the lighthouse?",
      "assistant: [tool-call measure]",
      "tool: [tool-result measure]",
      "user: a quick question: when does the harbour open?",
      "assistant: B: the harbour opens at six",
      "assistant: A: the lighthouse is 42 metres tall",
      "user: thanks, note both",
    ]);
    expect(await storedCalls(session)).toEqual([{ message: expect.any(String), state: "output-available" }]);
  });

  it("B's answer after A's tool result and answer (B's prompt read while A's call waited); every prompt is accepted", async () => {
    const holdQuick = gate();
    const { session, model, ask, toolStarted, toolDone } = setup(holdQuick.opened);
    const turnA = ask("a slow question: how tall is the lighthouse?");
    await toolStarted.opened;
    const turnB = ask("a quick question: when does the harbour open?");
    toolDone.open();
    await turnA;
    holdQuick.open();
    await turnB;
    await ask("thanks, note both");
    const prompts = model.doGenerateCalls.length > 0 ? model.doGenerateCalls : model.doStreamCalls;
    for (const call of prompts) expect(refusals(call.prompt)).toEqual([]);
    expect(conversation(prompts.at(-1))).toEqual([
      "user: a slow question: how tall is the lighthouse?",
      "assistant: [tool-call measure]",
      "tool: [tool-result measure]",
      "assistant: A: the lighthouse is 42 metres tall",
      "user: a quick question: when does the harbour open?",
      "assistant: B: the harbour opens at six",
      "user: thanks, note both",
    ]);
    expect(await storedCalls(session)).toEqual([{ message: expect.any(String), state: "output-available" }]);
  });
});
