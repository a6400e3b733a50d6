import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { prepareContextTurn } from "@contextblocks/ai";
import { assertStablePrefix, comparePrefix } from "@contextblocks/ai/test";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDurableContext, SqliteSkillProvider } from "../../src/index.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function step(
  content: LanguageModelV3GenerateResult["content"],
  toolCalls: boolean,
): LanguageModelV3GenerateResult {
  return {
    content,
    finishReason: toolCalls ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  };
}

const callTool = (id: string, toolName: string, input: unknown) =>
  step([{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }], true);
const answer = (text: string) => step([{ type: "text", text }], false);

describe("SqliteSkillProvider and the cached prefix", () => {
  let temporary: TemporaryDatabase;
  beforeEach(() => {
    temporary = openTemporaryDatabase();
  });
  afterEach(() => temporary.remove());

  it("a load/unload cycle keeps the prompt and tools byte-identical; a new skill shows after refresh", async () => {
    const skills = new SqliteSkillProvider(temporary.database);
    const context = createDurableContext(temporary.database, [
      { label: "soul", provider: { get: async () => "You are a careful assistant." } },
      { label: "skills", description: "Skills to load", provider: skills },
    ]);
    await context.setEntry("skills", "code-review", "Read the diff twice.", "Reviewing a pull request");
    const steps = [
      callTool("load-1", "load_context", { label: "skills", key: "code-review" }),
      callTool("unload-1", "unload_context", { label: "skills", key: "code-review" }),
      answer("Reviewed."),
      answer("Refreshed."),
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const next = steps.shift();
        if (next === undefined) throw new Error("the scripted model ran out of steps");
        return next;
      },
    });
    const history: ModelMessage[] = [{ role: "user", content: "Review my pull request." }];
    const result = await generateText({
      model,
      ...(await prepareContextTurn(context, history)),
      stopWhen: stepCountIs(5),
    });
    history.push(...result.response.messages);
    const [first, afterLoad, afterUnload] = model.doGenerateCalls;
    if (first === undefined || afterLoad === undefined || afterUnload === undefined)
      throw new Error("expected three model calls");
    expect(JSON.stringify(afterLoad.prompt)).toContain("Read the diff twice.");
    await assertStablePrefix(first, afterLoad, { context });
    await assertStablePrefix(first, afterUnload, { context });

    await skills.set("deploy", "Run pnpm deploy.", "Deploying");
    await context.refreshSystemPrompt();
    history.push({ role: "user", content: "Again." });
    await generateText({ model, ...(await prepareContextTurn(context, history)) });
    const refreshed = await comparePrefix(first, model.doGenerateCalls[3] ?? first, { context });
    expect(refreshed.system.changedBlocks).toEqual(["skills"]);
    expect(refreshed.tools.identical).toBe(true);
  });
});
