// User code like the README's, compiled against the built package (`@contextblocks/ai` resolves to dist/)
// under plain `strict`: the tool set must type `generateText` results as precisely as a literal ToolSet.
import { type ContextTool, type ContextToolSet, contextTools, prepareContextTurn } from "@contextblocks/ai";
import { ContextBlocks, type ToolOutcome } from "@contextblocks/core";
import { InMemoryContextProvider, InMemoryStore } from "@contextblocks/core/memory";
import { generateText, jsonSchema, type ModelMessage, stepCountIs, type Tool, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expectTypeOf, test } from "vitest";

const store = new InMemoryStore();
const context = new ContextBlocks(
  [
    { label: "soul", provider: { get: async () => "You are a concise assistant." } },
    { label: "memory", description: "Facts about the user", maxTokens: 1_000 },
  ],
  new InMemoryContextProvider({ store, label: "_system_prompt" }),
  (label) => new InMemoryContextProvider({ store, label }),
);
const model = new MockLanguageModelV3();
const history: ModelMessage[] = [];

const literalTool = tool({
  description: "a tool written by hand",
  inputSchema: jsonSchema<unknown>({ type: "object" }),
  execute: async (_input: unknown): Promise<ToolOutcome> => ({ isError: false, text: "done" }),
});
const literal = {
  set_context: literalTool,
  search_context: literalTool,
  edit_context: literalTool,
  load_context: literalTool,
  unload_context: literalTool,
};

describe("ContextToolSet", () => {
  test("every tool is present in the type and has an execute that resolves to an outcome", async () => {
    const tools = contextTools(context);
    expectTypeOf(tools.set_context).toEqualTypeOf<ContextTool>();
    expectTypeOf(tools.set_context).toExtend<Tool<unknown, ToolOutcome>>();
    const answer = await tools.set_context.execute(
      { label: "memory", content: "likes tea" },
      { toolCallId: "call-1", messages: [] },
    );
    expectTypeOf(answer).toEqualTypeOf<ToolOutcome>();
  });

  test("generateText results are as precise as with a literal ToolSet", async () => {
    const turn = await prepareContextTurn(context, history);
    const result = await generateText({ model, ...turn, stopWhen: stepCountIs(8) });
    const fromLiteral = await generateText({ model, tools: literal, prompt: "hi" });
    expectTypeOf(result.toolResults).toEqualTypeOf(fromLiteral.toolResults);
    expectTypeOf(result.toolCalls).toEqualTypeOf(fromLiteral.toolCalls);
    expectTypeOf(result.steps[0]!.toolCalls).toEqualTypeOf(fromLiteral.steps[0]!.toolCalls);
    for (const call of result.toolCalls) {
      // No "possibly undefined" (TS18048): the element is a tool call, not `… | undefined`.
      expectTypeOf(call.toolName).toEqualTypeOf<string>();
    }
    for (const toolResult of result.toolResults) {
      expectTypeOf(toolResult).not.toBeNullable();
      if (!toolResult.dynamic) expectTypeOf(toolResult.output).toEqualTypeOf<ToolOutcome>();
    }
  });

  test("excluded tools leave the type", () => {
    const tools = contextTools(context, { exclude: ["set_context", "unload_context"] });
    expectTypeOf(tools).toEqualTypeOf<ContextToolSet<"edit_context" | "search_context" | "load_context">>();
    expectTypeOf(tools).not.toHaveProperty("set_context");
  });
});
