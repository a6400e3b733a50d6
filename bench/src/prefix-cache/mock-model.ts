import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import type { ScriptedTurn } from "./session.js";

const USAGE: LanguageModelV3GenerateResult["usage"] = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/**
 * A model that follows the script: on a turn with a tool call it first calls the tool, and once the tool
 * result is in the prompt it answers with the turn's reply. Every request it receives is kept in
 * `doGenerateCalls` (prompt and tools), which is what the benchmark measures.
 */
export class ScriptedModel {
  readonly model: MockLanguageModelV3;
  private turn: ScriptedTurn | undefined;

  constructor() {
    this.model = new MockLanguageModelV3({
      doGenerate: async (options: LanguageModelV3CallOptions) => this.respond(options),
    });
  }

  /** The turn the next requests belong to. */
  play(turn: ScriptedTurn): void {
    this.turn = turn;
  }

  get calls(): LanguageModelV3CallOptions[] {
    return this.model.doGenerateCalls;
  }

  private respond(options: LanguageModelV3CallOptions): LanguageModelV3GenerateResult {
    const turn = this.turn;
    if (turn === undefined) throw new Error("ScriptedModel: no turn is playing");
    const last = options.prompt.at(-1);
    if (turn.toolCall && last?.role !== "tool") {
      return {
        content: [
          {
            type: "tool-call",
            toolCallId: `call-${turn.number}`,
            toolName: turn.toolCall.toolName,
            input: JSON.stringify(turn.toolCall.input),
          },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: USAGE,
        warnings: [],
      };
    }
    return {
      content: [{ type: "text", text: turn.reply }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: USAGE,
      warnings: [],
    };
  }
}
