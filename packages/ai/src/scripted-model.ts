import { estimateTokens } from "@contextblocks/core";
import type { ModelCallOptions } from "./pipeline/model-types.js";

/** One tool call a scripted step makes; `input` is what the tool receives (sent to the SDK as JSON). */
export interface ScriptedToolCall {
  toolName: string;
  input: unknown;
  /** Default: `call-<step>-<index>`, unique across the script. */
  toolCallId?: string | undefined;
}

/**
 * What the model answers to one call: text, tool calls (run by the SDK, in parallel, before the next step),
 * or both. A function gets the call first (to answer from what was sent: the prompt, a tool result).
 */
export type ScriptedStep =
  | { text: string; toolCalls?: readonly ScriptedToolCall[] | undefined }
  | { text?: string | undefined; toolCalls: readonly ScriptedToolCall[] }
  | ((call: ModelCallOptions) => ScriptedStep);

/**
 * What the model reads of a call: the part `LanguageModelV3CallOptions` and `V4`'s share, so one class is a
 * V3 model under ai 6 and ai 7 and a V4 model under ai 7. (The calls are recorded as the SDK sent them.)
 */
export interface ScriptedCall {
  prompt: ReadonlyArray<{ role: string; content: unknown }>;
  tools?: ReadonlyArray<unknown> | undefined;
}

/** Usage as the scripted model reports it: the AI SDK's shape (`LanguageModelV3Usage`, `V4` alike). */
export interface ScriptedUsage {
  inputTokens: { total: number; noCache: number; cacheRead: number; cacheWrite: number };
  outputTokens: { total: number; text: number; reasoning: number };
}

/** Options of `scriptedModel`. */
export interface ScriptedModelOptions<Version extends "v3" | "v4" = "v3"> {
  /**
   * The AI SDK model interface it implements: `"v3"` (default; ai 6, and ai 7 accepts it too) or `"v4"` (ai
   * 7's `LanguageModelV4`, what ai 7's providers implement).
   */
  specificationVersion?: Version | undefined;
  /** Default `"contextblocks-scripted"`. */
  provider?: string | undefined;
  /** Default `"scripted-model"`. */
  modelId?: string | undefined;
}

type ScriptedContent =
  | { type: "text"; text: string }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: string };

type ScriptedFinishReason = { unified: "stop" | "tool-calls"; raw: string };

/** What `doGenerate` resolves to: the fields `LanguageModelV3GenerateResult` and `V4`'s share. */
export interface ScriptedGenerateResult {
  content: ScriptedContent[];
  finishReason: ScriptedFinishReason;
  usage: ScriptedUsage;
  warnings: [];
}

/** One part of `doStream`'s stream: the parts `LanguageModelV3StreamPart` and `V4`'s share. */
export type ScriptedStreamPart =
  | { type: "stream-start"; warnings: [] }
  | { type: "text-start"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "text-end"; id: string }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: string }
  | { type: "finish"; finishReason: ScriptedFinishReason; usage: ScriptedUsage };

/**
 * A language model for tests that plays a script, one step per call, through the real `generateText` /
 * `streamText` (and `contextPipeline`). It reports usage as a provider does, so a session's `compactAfter`
 * behaves as in production: input tokens are estimated from everything sent (tools, system prompt,
 * messages), so they grow with the conversation; the part of the request that repeats the previous call's
 * start byte for byte is reported as `cacheRead` (what a provider's prefix cache would serve); output tokens
 * are estimated from the answer. Calls are recorded in `doGenerateCalls` / `doStreamCalls`, as the AI SDK's
 * `MockLanguageModelV3` records them. Running out of steps throws an error that says how many were played.
 */
export class ScriptedLanguageModel<Version extends "v3" | "v4" = "v3"> {
  readonly specificationVersion: Version;
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  /** The options of every `doGenerate` call, in order. */
  readonly doGenerateCalls: ModelCallOptions[] = [];
  /** The options of every `doStream` call, in order. */
  readonly doStreamCalls: ModelCallOptions[] = [];
  readonly #steps: ScriptedStep[];
  #played = 0;
  #previousRequest = "";

  constructor(steps: readonly ScriptedStep[], options: ScriptedModelOptions<Version> = {}) {
    if (!Array.isArray(steps)) {
      throw new TypeError("scriptedModel: steps must be an array of { text } / { toolCalls } steps");
    }
    this.#steps = [...steps];
    this.specificationVersion = (options.specificationVersion ?? "v3") as Version;
    this.provider = options.provider ?? "contextblocks-scripted";
    this.modelId = options.modelId ?? "scripted-model";
  }

  /** How many steps the model has played. */
  get played(): number {
    return this.#played;
  }

  /** How many steps are left. */
  get remaining(): number {
    return this.#steps.length;
  }

  async doGenerate(call: ScriptedCall): Promise<ScriptedGenerateResult> {
    const options = call as ModelCallOptions;
    this.doGenerateCalls.push(options);
    return this.#play(options);
  }

  async doStream(call: ScriptedCall): Promise<{ stream: ReadableStream<ScriptedStreamPart> }> {
    const options = call as ModelCallOptions;
    this.doStreamCalls.push(options);
    const result = this.#play(options);
    const parts: ScriptedStreamPart[] = [{ type: "stream-start", warnings: [] }];
    result.content.forEach((content, index) => {
      if (content.type === "text") {
        const id = `text-${index}`;
        parts.push(
          { type: "text-start", id },
          { type: "text-delta", id, delta: content.text },
          { type: "text-end", id },
        );
      } else {
        parts.push(content);
      }
    });
    parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage });
    return {
      stream: new ReadableStream<ScriptedStreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  #play(options: ModelCallOptions): ScriptedGenerateResult {
    let step = this.#steps.shift();
    if (step === undefined) {
      throw new Error(
        `scriptedModel: the script ran out after ${this.#played} steps (call ${this.#played + 1} has no step); add a step for every model call, tool-call steps included`,
      );
    }
    const number = this.#played;
    this.#played++;
    while (typeof step === "function") step = step(options);
    const content: ScriptedContent[] = [];
    if (step.text !== undefined) content.push({ type: "text", text: step.text });
    (step.toolCalls ?? []).forEach((call, index) => {
      content.push({
        type: "tool-call",
        toolCallId: call.toolCallId ?? `call-${number}-${index}`,
        toolName: call.toolName,
        input: JSON.stringify(call.input ?? {}),
      });
    });
    const calls = content.some((part) => part.type === "tool-call");
    return {
      content,
      finishReason: calls ? { unified: "tool-calls", raw: "tool_use" } : { unified: "stop", raw: "end_turn" },
      usage: this.#usage(options, content),
      warnings: [],
    };
  }

  /** Input estimated from the whole request; its byte-identical start with the last call counted as cached. */
  #usage(options: ModelCallOptions, content: readonly ScriptedContent[]): ScriptedUsage {
    // A provider's order: tools, then the system prompt, then the messages.
    const request = JSON.stringify([options.tools ?? [], options.prompt]);
    const shared = sharedStart(this.#previousRequest, request);
    this.#previousRequest = request;
    const total = estimateTokens(request);
    const cacheRead = Math.min(total, estimateTokens(request.slice(0, shared)));
    const text = content.map((part) => (part.type === "text" ? part.text : "")).join("");
    const calls = content
      .map((part) => (part.type === "tool-call" ? part.toolName + part.input : ""))
      .join("");
    const textTokens = estimateTokens(text);
    const output = textTokens + estimateTokens(calls);
    return {
      inputTokens: { total, noCache: total - cacheRead, cacheRead, cacheWrite: 0 },
      outputTokens: { total: output, text: textTokens, reasoning: 0 },
    };
  }
}

/** How many characters two strings share at their start. */
function sharedStart(previous: string, next: string): number {
  const length = Math.min(previous.length, next.length);
  let index = 0;
  while (index < length && previous.charCodeAt(index) === next.charCodeAt(index)) index++;
  return index;
}

/**
 * A scripted model for tests (see `ScriptedLanguageModel`):
 *
 * ```ts
 * const model = scriptedModel([
 *   { toolCalls: [{ toolName: "set_context", input: { label: "memory", content: "Prefers TypeScript." } }] },
 *   { text: "Noted." },
 * ]);
 * ```
 */
export function scriptedModel<Version extends "v3" | "v4" = "v3">(
  steps: readonly ScriptedStep[],
  options?: ScriptedModelOptions<Version>,
): ScriptedLanguageModel<Version> {
  return new ScriptedLanguageModel(steps, options);
}
