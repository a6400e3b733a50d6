import { SessionBuilder } from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import * as aiTest from "ai/test";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../src/index.js";
import { type ScriptedStep, scriptedModel } from "../src/test.js";
import { answer, callTools, scriptedModel as constantUsageModel } from "./helpers.js";

// ai 7's `ai/test` has `MockLanguageModelV4`: there the V4 model is exercised too (V3 on both).
// These files compile against ai 6's types, which know only V3: the version is typed as "v3" for them.
const versions = ("MockLanguageModelV4" in aiTest ? ["v3", "v4"] : ["v3"]) as "v3"[];
const paragraph = (turn: number) =>
  `Turn ${turn}: ${"the harbour schedule changes with the tide; ".repeat(30)}`;

describe.each(versions)("scriptedModel (%s) through the AI SDK", (specificationVersion) => {
  it("plays tool calls and text through generateText and streamText, recording each call", async () => {
    const steps: ScriptedStep[] = [
      { toolCalls: [{ toolName: "lookup", input: { city: "Oslo" } }] },
      (call) => ({
        text: `saw ${JSON.stringify(call.prompt.at(-1)?.content).includes("12°C") ? "12°C" : "?"}`,
      }),
      { text: "streamed answer" },
    ];
    const model = scriptedModel(steps, { specificationVersion });
    const tools = {
      lookup: tool({
        inputSchema: jsonSchema<{ city: string }>({
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        }),
        execute: async ({ city }) => `${city}: 12°C`,
      }),
    };
    const result = await generateText({ model, tools, prompt: "Weather?", stopWhen: stepCountIs(3) });
    expect(result.steps[0]?.toolCalls.map((call) => [call.toolName, call.input])).toEqual([
      ["lookup", { city: "Oslo" }],
    ]);
    expect(result.text).toBe("saw 12°C");
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(await streamText({ model, prompt: "Again" }).text).toBe("streamed answer");
    expect(model.doStreamCalls).toHaveLength(1);
    await expect(generateText({ model, prompt: "one more" })).rejects.toThrow(/ran out after 3 steps/);
  });

  it("reports usage that grows with the prompt, the repeated prefix as cached: compactAfter compacts", async () => {
    const steps: ScriptedStep[] = [
      {
        toolCalls: [{ toolName: "set_context", input: { label: "memory", content: "Tide tables matter." } }],
      },
    ];
    for (let turn = 0; turn < 8; turn++) steps.push({ text: `Answer ${turn}: ${paragraph(turn)}` });
    const { inputs, cached, compactions } = await sixTurns(scriptedModel(steps, { specificationVersion }));
    // Each turn sends more than the last, and repeats the last turn's start (tools, system prompt, history).
    for (let index = 1; index < inputs.length; index++) {
      expect(inputs[index]).toBeGreaterThan(inputs[index - 1] ?? 0);
      expect(cached[index]).toBeGreaterThan(0);
      expect(cached[index]).toBeLessThan(inputs[index] ?? 0);
    }
    // Calibrated by those reports, the estimate passes the threshold and the session compacts.
    expect(compactions).toBe(1);
  });
});

describe("a mock that reports constant usage (what the scripted model replaces)", () => {
  it("never lets compactAfter fire: the estimate is calibrated down to the 10 tokens it reports", async () => {
    const steps = [callTools(0, { toolName: "set_context", input: { label: "memory", content: "Tides." } })];
    for (let turn = 0; turn < 8; turn++) steps.push(answer(`Answer ${turn}: ${paragraph(turn)}`));
    expect((await sixTurns(constantUsageModel(steps))).compactions).toBe(0);
  });
});

/** Up to six turns of the documented session wiring with `compactAfter(2_000)`; stops after a compaction. */
async function sixTurns(model: Parameters<typeof contextPipeline>[0]["model"]) {
  const session = new SessionBuilder(inMemoryBackend())
    .forSession("chat")
    .withContext("soul", { provider: { get: async () => "You are the harbour master's assistant." } })
    .withContext("memory", { description: "Facts", maxTokens: 1000 })
    .withCachedPrompt()
    .onCompaction(
      createCompactFunction({
        summarize: async () => "SUMMARY of the earlier turns.",
        protectHead: 1,
        tailTokenBudget: 400,
        minTailMessages: 2,
      }),
    )
    .compactAfter(2_000)
    .build();
  let compactions = 0;
  session.subscribe((event) => {
    if (event.type === "compacted") compactions++;
  });
  const pipeline = contextPipeline({ model, session });
  const inputs: number[] = [];
  const cached: number[] = [];
  for (let turn = 0; turn < 6 && compactions === 0; turn++) {
    const result = await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: paragraph(turn),
      stopWhen: stepCountIs(3),
    });
    // The last step's usage: what the turn's final request sent (ai 7's `usage` sums the steps).
    const usage = result.steps.at(-1)?.usage;
    inputs.push(usage?.inputTokens ?? 0);
    cached.push(usage?.inputTokenDetails?.cacheReadTokens ?? 0);
  }
  return { inputs, cached, compactions };
}
