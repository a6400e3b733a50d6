import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { type Session, SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { createCompactFunction } from "@contextblocks/sessions/compaction";
import { inMemoryBackend } from "@contextblocks/sessions/memory";
import { generateText, streamText } from "ai";
import { describe, expect, it } from "vitest";
import { contextPipeline } from "../../src/index.js";
import { answer, scriptedModel, scriptedStreamModel } from "../helpers.js";

/** A tool-heavy history: file reads whose JSON outputs a chars/4 estimate counts at about 30K tokens. */
function toolHeavyHistory(): SessionMessage[] {
  const messages: SessionMessage[] = [];
  for (let index = 0; index < 12; index++) {
    messages.push({ id: `u${index}`, role: "user", parts: [{ type: "text", text: `read file ${index}` }] });
    messages.push({
      id: `a${index}`,
      role: "assistant",
      parts: [
        {
          type: "tool-readFile",
          toolCallId: `call-${index}`,
          state: "output-available",
          input: { path: `src/file-${index}.ts` },
          output: { lines: Array.from({ length: 250 }, (_, line) => `${line}: const x${line} = ${line};`) },
        },
      ],
    });
  }
  return messages;
}

/** A model answer whose usage says the provider counted `inputTokens` for the prompt. */
function answerCounted(text: string, inputTokens: number): LanguageModelV3GenerateResult {
  return {
    ...answer(text),
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 5, text: 5, reasoning: 0 },
    },
  };
}

async function sessionWithHistory(summaries: string[]): Promise<Session> {
  const session = new SessionBuilder(inMemoryBackend())
    .forSession("tools")
    .onCompaction(
      createCompactFunction({
        summarize: async (prompt) => {
          summaries.push(prompt);
          return "Summary of the file reads.";
        },
        protectHead: 0,
        minTailMessages: 2,
        tailTokenBudget: 0,
      }),
    )
    .compactAfter(100_000)
    .build();
  await session.appendMessages(toolHeavyHistory());
  return session;
}

describe("compactAfter calibrated by the provider's usage (agents issues #1538 and #1593)", () => {
  it("the estimate alone stays under the threshold for a tool-heavy history", async () => {
    const session = await sessionWithHistory([]);
    const estimate = await session.estimateTokens();
    expect(estimate).toBeGreaterThan(20_000);
    expect(estimate).toBeLessThan(100_000);
  });

  for (const [name, run] of [
    [
      "generateText",
      (session: Session, inputTokens: number) => {
        const pipeline = contextPipeline({
          model: scriptedModel([answerCounted("Done.", inputTokens)]),
          session,
        });
        return generateText({ model: pipeline.model, prompt: "summarise the files" });
      },
    ],
    [
      "streamText",
      async (session: Session, inputTokens: number) => {
        const model = scriptedStreamModel([answerCounted("Done.", inputTokens)]);
        const pipeline = contextPipeline({ model, session });
        const result = streamText({ model: pipeline.model, prompt: "summarise the files" });
        await result.consumeStream();
        return result;
      },
    ],
  ] as const) {
    it(`${name}: a reported 140K-token prompt compacts at the end of the turn`, async () => {
      const summaries: string[] = [];
      const session = await sessionWithHistory(summaries);
      await run(session, 140_000);
      expect(summaries).toHaveLength(1);
      expect(await session.getCompactions()).toHaveLength(1);
      expect(await session.estimateTokens()).toBeLessThan(100_000);
    });

    it(`${name}: a reported prompt under the threshold does not compact`, async () => {
      const summaries: string[] = [];
      const session = await sessionWithHistory(summaries);
      await run(session, 60_000);
      expect(summaries).toHaveLength(0);
      // The estimate follows the provider's count: about 60K plus the turn's few tokens.
      const estimate = await session.estimateTokens();
      expect(estimate).toBeGreaterThan(59_000);
      expect(estimate).toBeLessThan(62_000);
    });
  }

  it("reportUsage refuses what is not a count", async () => {
    const session = await sessionWithHistory([]);
    await expect(session.reportUsage({ inputTokens: Number.NaN })).rejects.toThrow(/inputTokens must be/);
    await expect(session.reportUsage({ inputTokens: 10, pendingTokens: -1 })).rejects.toThrow(
      /pendingTokens must be/,
    );
  });
});
