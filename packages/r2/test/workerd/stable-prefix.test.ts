import { env } from "cloudflare:test";
import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { prepareContextTurn } from "@contextblocks/ai";
import { assertStablePrefix, comparePrefix } from "@contextblocks/ai/test";
import { ContextBlocks } from "@contextblocks/core";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { R2SkillProvider } from "../../src/index.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function callTool(id: string, toolName: string, input: unknown): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

function answer(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage,
    warnings: [],
  };
}

describe("skills from R2 and the cached prefix", () => {
  it("a load/unload cycle never changes the tool definitions or the prompt; a new skill shows only after refresh", async () => {
    const skills = new R2SkillProvider(env.SKILLS_BUCKET, { prefix: "stable-prefix/" });
    await skills.set("code-review", "Read the diff twice, then run the tests.", "Reviewing a pull request");
    await skills.set("debugging", "Reproduce, bisect, fix, add a test.", "Debugging a failure");
    const context = new ContextBlocks([
      { label: "soul", provider: { get: async () => "You are a careful assistant." } },
      { label: "skills", description: "Skills to load on demand", provider: skills },
    ]);
    const steps = [
      callTool("load-1", "load_context", { label: "skills", key: "code-review" }),
      callTool("unload-1", "unload_context", { label: "skills", key: "code-review" }),
      answer("Reviewed."),
      answer("Nothing new."),
      answer("Now I see the new skill."),
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        const step = steps.shift();
        if (step === undefined) throw new Error("the scripted model ran out of steps");
        return step;
      },
    });
    const history: ModelMessage[] = [{ role: "user", content: "Review my pull request." }];
    const turn = async () => {
      const result = await generateText({
        model,
        ...(await prepareContextTurn(context, history)),
        stopWhen: stepCountIs(5),
      });
      history.push(...result.response.messages);
    };

    await turn();
    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(3);
    expect(JSON.stringify(calls[1]?.prompt), "the loaded text reached the model").toContain(
      "Read the diff twice, then run the tests.",
    );
    expect(JSON.stringify(calls[2]?.prompt)).toContain('Unloaded \\"code-review\\" from skills.');
    const first = calls[0];
    if (first === undefined) throw new Error("no first call");
    await assertStablePrefix(first, calls[1] ?? first, { context });
    await assertStablePrefix(first, calls[2] ?? first, { context });

    // A skill added meanwhile stays out of the frozen prompt until a refresh.
    await skills.set("deploy", "Run pnpm deploy.", "Deploying the worker");
    history.push({ role: "user", content: "Anything else?" });
    await turn();
    await assertStablePrefix(first, calls[3] ?? first, { context });

    await context.refreshSystemPrompt();
    history.push({ role: "user", content: "And now?" });
    await turn();
    const refreshed = await comparePrefix(first, calls[4] ?? first, { context });
    expect(refreshed.system.changedBlocks).toEqual(["skills"]);
    expect(refreshed.tools.identical, "tool definitions stay byte-identical").toBe(true);
    expect(JSON.stringify(calls[4]?.prompt)).toContain("- deploy: Deploying the worker");
  });
});
