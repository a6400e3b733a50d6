import type { ModelMessage, UIMessage } from "ai";
import { parseToolInput } from "./tool-input.js";

/**
 * The two message shapes of the AI SDK this package reads and returns: `ModelMessage` (what
 * `generateText`/`streamText` take, with `content`) and `UIMessage` (what `useChat` sends, with `parts`).
 * Each message is handled in its own shape, so a function given one kind returns the same kind.
 */
export type ContextMessage = ModelMessage | UIMessage;

/** True for a UI message (`parts`), false for a model message (`content`). */
export function isUIMessage(message: ContextMessage): message is UIMessage {
  return Array.isArray((message as { parts?: unknown }).parts);
}

/** How a tool call ended, as far as the transcript tells. */
export type ToolCallOutcome = "succeeded" | "failed" | "pending";

/** Where a part sits: index of the message, index of the part in its `content` or `parts`. */
export interface PartLocation {
  message: number;
  part: number;
}

/** A tool call found in a transcript, with how it ended and where its result is. */
export interface TranscriptToolCall {
  toolCallId: string;
  toolName: string;
  /** The arguments as recorded (a JSON string is parsed). */
  input: unknown;
  /** Order of the call in the transcript: a later call has a larger number. */
  position: number;
  /** `failed`: an error result (an error output or tool error, a denial, or an outcome with `isError`). */
  outcome: ToolCallOutcome;
  /** The part holding the result (for a UI message, the tool part itself); absent while pending. */
  result?: PartLocation;
}

/**
 * Every tool call in the transcript, in order, with its outcome. Model and UI messages may be mixed. A
 * model-message result belongs to the newest call before it with the same id, so providers that reuse ids
 * across turns are read correctly.
 */
export function toolCallsOf(messages: readonly ContextMessage[]): TranscriptToolCall[] {
  const calls: TranscriptToolCall[] = [];
  const open = new Map<string, TranscriptToolCall>();
  messages.forEach((message, messageIndex) => {
    if (isUIMessage(message)) {
      message.parts.forEach((part, partIndex) => {
        const call = uiToolPart(part);
        if (call)
          calls.push({ ...call, position: calls.length, result: { message: messageIndex, part: partIndex } });
      });
      return;
    }
    if (typeof message.content === "string") return;
    message.content.forEach((part, partIndex) => {
      if (part.type === "tool-call") {
        const call: TranscriptToolCall = {
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: parseInput(part.input),
          position: calls.length,
          outcome: "pending",
        };
        calls.push(call);
        open.set(part.toolCallId, call);
      } else if (part.type === "tool-result") {
        const call = open.get(part.toolCallId);
        if (!call) return;
        open.delete(part.toolCallId);
        call.outcome = outputOutcome(part.output);
        call.result = { message: messageIndex, part: partIndex };
      }
    });
  });
  return calls;
}

/** The tool name, id, input and outcome of a UI tool part, or `null` for other parts. */
function uiToolPart(
  part: UIMessage["parts"][number],
): Omit<TranscriptToolCall, "position" | "result"> | null {
  let toolName: string;
  if (part.type === "dynamic-tool") toolName = part.toolName;
  else if (part.type.startsWith("tool-")) toolName = part.type.slice("tool-".length);
  else return null;
  const tool = part as { toolCallId?: unknown; input?: unknown; state?: unknown; output?: unknown };
  if (typeof tool.toolCallId !== "string") return null;
  let outcome: ToolCallOutcome = "pending";
  if (tool.state === "output-available") outcome = isErrorOutcome(tool.output) ? "failed" : "succeeded";
  else if (tool.state === "output-error" || tool.state === "output-denied") outcome = "failed";
  return { toolCallId: tool.toolCallId, toolName, input: parseInput(tool.input), outcome };
}

/**
 * A model-message tool result's outcome, by the output's type: error outputs (`error-text`, `error-json`,
 * `execution-denied`) failed; anything else succeeded. Text is never read for this: a result written
 * before tools answered structured outcomes (a plain `text` output) counts as a success.
 */
function outputOutcome(output: { type: string; value?: unknown }): ToolCallOutcome {
  switch (output.type) {
    case "text":
    case "json":
    case "content":
      return "succeeded";
    default:
      return "failed";
  }
}

/** A UI tool part's raw output is core's `ToolOutcome`; a plain string (older transcripts) is a success. */
function isErrorOutcome(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { isError?: unknown }).isError === true;
}

/** Input stored as JSON text reads as the SDK sent it; input the SDK already parsed is used as it is. */
function parseInput(input: unknown): unknown {
  return typeof input === "string" ? parseToolInput(input) : input;
}

/** `label` and `key` of a `load_context` / `unload_context` input, or `null` when they are not strings. */
export function entryOf(input: unknown): { label: string; key: string } | null {
  if (typeof input !== "object" || input === null) return null;
  const label = Object.hasOwn(input, "label") ? (input as { label?: unknown }).label : undefined;
  const key = Object.hasOwn(input, "key") ? (input as { key?: unknown }).key : undefined;
  return typeof label === "string" && typeof key === "string" ? { label, key } : null;
}
