import type { LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { contextPipeline } from "@contextblocks/ai";
import type { Session, SessionMessage } from "@contextblocks/sessions";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import type { WriterScript } from "./writer-script.js";

/*
 * The turns the writers take: turn `n` is one `generateText` call through `contextPipeline({ model,
 * session })` with the user's words "turn n". The scripted model first calls the `lookup` tool, which
 * awaits a few milliseconds as a tool doing I/O would, then answers "answer n". The pipeline stores the
 * user's message and the tool call after the first model call, writes the tool's result into the call's
 * part when the second call starts, and stores the answer after it: three messages, two model calls.
 */

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** The turn number in "turn n", or `null`. */
function turnOf(text: string): number | null {
  const match = /^turn (\d+)$/.exec(text);
  return match === null ? null : Number(match[1]);
}

/** A model that calls `lookup` for the newest "turn n", then, given the tool's result, answers. */
export function scriptedTurnModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options): Promise<LanguageModelV3GenerateResult> => {
      const last = options.prompt.at(-1);
      const question = [...options.prompt].reverse().find((message) => message.role === "user");
      const text =
        question?.role === "user"
          ? question.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
          : [];
      const turn = turnOf(text.at(-1) ?? "") ?? -1;
      if (last?.role === "tool") {
        return {
          content: [{ type: "text", text: `answer ${turn}` }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        };
      }
      return {
        content: [
          {
            type: "tool-call",
            toolCallId: `lookup-${crypto.randomUUID()}`,
            toolName: "lookup",
            input: JSON.stringify({ turn }),
          },
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

const lookup = tool({
  description: "Looks up the record of a turn.",
  inputSchema: z.object({ turn: z.number() }),
  execute: async ({ turn }) => {
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));
    return `fact ${turn}`;
  },
});

/** Takes turn `turn` on `session` through the pipeline; resolves with the ids of the messages it stored. */
export async function takeTurn(session: Session, turn: number): Promise<string[]> {
  const ids: string[] = [];
  const pipeline = contextPipeline({
    model: scriptedTurnModel(),
    session,
    sessionOptions: {
      generateId: () => {
        const id = crypto.randomUUID();
        ids.push(id);
        return id;
      },
    },
  });
  await generateText({
    model: pipeline.model,
    tools: { ...pipeline.tools, lookup },
    prompt: `turn ${turn}`,
    stopWhen: stepCountIs(4),
  });
  return ids;
}

/** What a stored message of a turn must be, without its id, its time and the tool call's id. */
function shapeOf(message: SessionMessage): string {
  return JSON.stringify({
    role: message.role,
    // Keys sorted: a part's key order is not part of what it says.
    parts: message.parts.map((part) =>
      Object.fromEntries(
        Object.entries({ ...part, toolCallId: typeof part.toolCallId === "string" ? "id" : part.toolCallId })
          .filter(([, value]) => value !== undefined)
          .sort(([left], [right]) => left.localeCompare(right)),
      ),
    ),
  });
}

/** The shapes a stored message of turn `turn` may have: the question, the call (before or after its result), the answer. */
function turnShapes(turn: number): string[] {
  const call = { type: "tool-lookup", toolCallId: "id", input: { turn } };
  return [
    { role: "user", parts: [{ type: "text", text: `turn ${turn}` }] },
    { role: "assistant", parts: [{ ...call, state: "input-available" }] },
    { role: "assistant", parts: [{ ...call, state: "output-available", output: `fact ${turn}` }] },
    { role: "assistant", parts: [{ type: "text", text: `answer ${turn}` }] },
  ].map((message) => shapeOf({ id: "", ...message }));
}

/** The turn a stored message belongs to, read from its text or its tool call's input. */
function turnOfMessage(message: SessionMessage): number | null {
  for (const part of message.parts) {
    if (typeof part.text === "string") {
      const turn = turnOf(part.text) ?? turnOf(part.text.replace(/^answer /, "turn "));
      if (turn !== null) return turn;
    }
    const input = part.input as { turn?: unknown } | undefined;
    if (typeof input?.turn === "number") return input.turn;
  }
  return null;
}

/** The writer script of `takeTurn`. */
export const turnScript: WriterScript = {
  isWhole(message) {
    const turn = turnOfMessage(message);
    return turn !== null && turnShapes(turn).includes(shapeOf(message));
  },
  partialBatches(path) {
    // The first model call's batch is the user's message and the tool call: a question not followed by
    // its call was stored in part.
    return path.flatMap((message, index) => {
      if (message.role !== "user") return [];
      const next = path[index + 1];
      const whole =
        next !== undefined && next.role === "assistant" && turnOfMessage(next) === turnOfMessage(message);
      return whole ? [] : [message.id];
    });
  },
};
