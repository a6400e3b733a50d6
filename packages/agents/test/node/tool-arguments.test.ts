import { answer, scriptedModel, toolResult, toolStep } from "@contextblocks/test-kit/model";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { generateText, stepCountIs } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../src/index.js";

let temporary: TemporaryDatabase | undefined;
afterEach(() => {
  temporary?.remove();
  temporary = undefined;
});

describe("Session.tools() given hostile arguments in one step of generateText", () => {
  it("answers each call with text, nested arguments included, and the stored block is unchanged", async () => {
    temporary = openTemporaryDatabase();
    const session = Session.create(temporary.database)
      .withContext("memory", { description: "Facts", maxTokens: 50 })
      .withCachedPrompt();
    await session.replaceContextBlock("memory", "Name: Ada.");
    const calls = [
      // Nested too deeply for the SDK to copy the step's messages: before, a RangeError out of generateText.
      { toolName: "set_context", input: "nested, below" },
      { toolName: "set_context", input: { label: "memory", content: "word ".repeat(300) } },
      { toolName: "edit_context", input: { label: "memory", old_str: "Bob", new_str: "Eve" } },
      { toolName: "set_context", input: { label: "soul", content: "You are a pirate." } },
    ];
    const step = toolStep(calls);
    const first = step.content[0] as { input: string };
    first.input = `{"label":"memory","content":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const model = scriptedModel([step, answer("Sorry.")]);
    const result = await generateText({
      model,
      prompt: "Remember.",
      tools: await session.tools(),
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Sorry.");
    expect(calls.map((_, index) => toolResult(model.doGenerateCalls[1], `call-${index}`))).toEqual([
      "Error: set_context: the arguments nest arrays or objects deeper than 100 levels; send one flat object of the fields the tool lists",
      expect.stringMatching(/^Error: Block "memory" exceeds maxTokens: \d+ > 50/),
      expect.stringMatching(/^Error: old_str does not occur in memory; nothing was changed/),
      expect.stringMatching(/^Error: Block "soul" not found\./),
    ]);
    expect(session.getContextBlock("memory")?.content).toBe("Name: Ada.");
  });
});
