import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";
import { toolCallsOf } from "../../src/messages.js";
import { answer, scriptedModel, scriptedStreamModel } from "../helpers.js";

/** Tool input text a model may send; the first five the AI SDK's secure parser refuses. */
const INPUTS = [
  '{"__proto__":{"admin":true}}',
  '{"city":"Paris","__proto__":{"admin":true}}',
  '{"city":"Paris","nested":[{"__proto__":{"admin":true}}]}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{"\\u005f_proto__":{"admin":true}}',
  '{"constructor":{"name":"a constructor without a prototype is fine"}}',
  '{"city":"Paris"}',
  "[1,2]",
  "   ",
  '{"city": "Par',
];

/** The first assistant message of a prompt, as JSON. */
function assistantJson(prompt: readonly { role: string }[] | undefined): string {
  return JSON.stringify(prompt?.find((message) => message.role === "assistant"));
}

/** One turn that calls `lookup` with `input` and answers, then the next turn; the prompts the model received. */
async function twoTurns(input: string, streamed: boolean): Promise<LanguageModelV3Prompt[]> {
  const call = {
    ...answer(""),
    content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
  } as ReturnType<typeof answer>;
  const steps = [call, answer("done"), answer("next")];
  const model = streamed ? scriptedStreamModel(steps) : scriptedModel(steps);
  const session = new SessionBuilder(inMemoryBackend()).forSession("chat").build();
  const pipeline = contextPipeline({ model, session });
  const tools = { lookup: tool({ inputSchema: jsonSchema({ type: "object" }), execute: async () => "42" }) };
  const turn = async (prompt: string) => {
    const options = { model: pipeline.model, prompt, tools, stopWhen: stepCountIs(2) };
    if (streamed) await streamText(options).consumeStream();
    else await generateText(options);
  };
  await turn("weather?");
  await turn("again");
  return (streamed ? model.doStreamCalls : model.doGenerateCalls).map((sent) => sent.prompt);
}

describe.each([
  ["generateText", false],
  ["streamText", true],
])("%s: a stored tool call replays with the input the AI SDK sent", (_name, streamed) => {
  it.each(INPUTS)(
    "input %s: the next turn repeats the SDK's second step",
    async (input) => {
      const [, second, third] = await twoTurns(input, streamed);
      // The SDK's own loop sent the call back on its second step; the next turn replays it from the session.
      expect(assistantJson(third)).toBe(assistantJson(second));
    },
    30_000,
  );
});

describe("toolCallsOf reads input text as the AI SDK parses it", () => {
  it("a call with a __proto__ key reads as {} (the SDK refused it), not as its label and key", () => {
    const input = '{"label":"skills","key":"pdf-forms","__proto__":{"admin":true}}';
    const [call] = toolCallsOf([
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "load_context", input }],
      },
    ]);
    expect(call?.input).toEqual({});
    expect(Object.hasOwn(call?.input as object, "__proto__")).toBe(false);
  });

  it("well-formed input text still reads as its JSON", () => {
    const input = '{"label":"skills","key":"pdf-forms"}';
    const [call] = toolCallsOf([
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "load_context", input }],
      },
    ]);
    expect(call?.input).toEqual({ label: "skills", key: "pdf-forms" });
  });
});
