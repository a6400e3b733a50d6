import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { contextPipeline, toSessionMessage } from "../../src/index.js";
import { responseMessages } from "../../src/pipeline/run-messages.js";
import { answer, scriptedModel, scriptedStreamModel } from "../helpers.js";

/*
 * A provider that hands over a tool call's input as something other than JSON text (none, an object, a
 * number: third-party providers do). The AI SDK answers such a call with a tool error and the loop goes on;
 * the pipeline storing the turn must not be the one that throws out of generateText or streamText.
 */

const inputs: [string, unknown][] = [
  ["no input", undefined],
  ["null", null],
  ["an object", { label: "memory", content: "Likes tea." }],
  ["a number", 42],
];

function callWithInput(input: unknown): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "tool-call", toolCallId: "c1", toolName: "set_context", input } as never],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 5, text: 5, reasoning: 0 },
    },
    warnings: [],
  };
}

function sessionWithMemory() {
  return new SessionBuilder(inMemoryBackend())
    .forSession("chat")
    .withContext("memory", { maxTokens: 100 })
    .build();
}

describe("a tool call whose input is not text", () => {
  for (const [name, input] of inputs) {
    it(`(${name}) is a tool error the loop goes on from, stored with input {}; memory unchanged`, async () => {
      for (const mode of ["generateText", "streamText"] as const) {
        const session = sessionWithMemory();
        await session.context.setBlock("memory", "Name: Ada.");
        const steps = [callWithInput(input), answer("Sorry, again.")];
        const model = mode === "generateText" ? scriptedModel(steps) : scriptedStreamModel(steps);
        const pipeline = contextPipeline({ model, session });
        const request = {
          model: pipeline.model,
          tools: pipeline.tools,
          prompt: "Remember that I like tea.",
          stopWhen: stepCountIs(3),
        };
        const result =
          mode === "generateText"
            ? await generateText(request)
            : await (async () => {
                const streamed = streamText(request);
                return { text: await streamed.text, steps: await streamed.steps };
              })();
        expect(result.text, mode).toBe("Sorry, again.");
        expect(
          result.steps[0]?.content.filter((part) => part.type === "tool-error"),
          mode,
        ).toHaveLength(1);
        const stored = await session.getHistory();
        const calls = stored.flatMap((message) =>
          message.parts.filter((part) => part.type === "tool-set_context"),
        );
        expect(
          calls.map((part) => part.input),
          mode,
        ).toEqual([{}]);
        expect(stored.at(-1)?.parts.at(-1), mode).toMatchObject({ type: "text", text: "Sorry, again." });
        expect((await session.context.getBlock("memory"))?.content, mode).toBe("Name: Ada.");
      }
    });
  }
});

describe("a tool call whose JSON input nests thousands deep", () => {
  it("is stored with input {}, a shallow one whole: storing it whole ran out of stack", () => {
    // On ai 6 the SDK parses input 2,300 levels deep, calls the tool and goes on, and storing the turn threw
    // a RangeError out of generateText (ai 7's SDK stops near 2,100 itself). 20,000 overflows any stack.
    const depth = 20_000;
    const nested = "[".repeat(depth) + "]".repeat(depth);
    const [message] = responseMessages([
      { type: "tool-call", toolCallId: "c1", toolName: "set_context", input: nested },
      { type: "tool-call", toolCallId: "c2", toolName: "set_context", input: "[[[1]]]" },
    ]);
    if (message === undefined) throw new Error("expected the assistant message");
    const stored = toSessionMessage(message, "m1", new Date(0));
    expect(stored.parts.map((part) => (part as { input?: unknown }).input)).toEqual([{}, [[[1]]]]);
  });
});
