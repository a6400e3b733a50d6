import { contextPipeline } from "@contextblocks/ai";
import { scriptedModel } from "@contextblocks/ai/test";
import { SessionBuilder } from "@contextblocks/sessions";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, stepCountIs, streamText } from "ai";
import { describe, expect, it } from "vitest";

/**
 * `@contextblocks/ai/test`'s scripted model as a user on ai 7 has it (the built package, ai 7's types): both
 * the V4 model and the V3 one are `LanguageModel`s here, and run the session pipeline.
 */
describe.each(["v4", "v3"] as const)("scriptedModel(%s) on ai 7, from the built package", (version) => {
  it("writes memory with set_context through generateText, answers through streamText", async () => {
    const steps = [
      { toolCalls: [{ toolName: "set_context", input: { label: "memory", content: "Likes tide tables." } }] },
      { text: "Noted." },
      { text: "Tide tables." },
    ];
    // Each is a model ai 7's types accept as it is.
    const model =
      version === "v4" ? scriptedModel(steps, { specificationVersion: "v4" }) : scriptedModel(steps);
    expect(model.specificationVersion).toBe(version);
    const session = new SessionBuilder(inMemoryBackend())
      .forSession("chat")
      .withContext("memory", { maxTokens: 200 })
      .build();
    const pipeline = contextPipeline({ model, session });
    const first = await generateText({
      model: pipeline.model,
      tools: pipeline.tools,
      prompt: "Remember: I like tide tables.",
      stopWhen: stepCountIs(3),
    });
    expect(first.text).toBe("Noted.");
    expect(first.steps[0]?.usage.inputTokens).toBeGreaterThan(0);
    const second = streamText({ model: pipeline.model, tools: pipeline.tools, prompt: "What do I like?" });
    expect(await second.text).toBe("Tide tables.");
    await session.context.load();
    expect(session.context.getBlock("memory")?.content).toBe("Likes tide tables.");
  });
});
