import type { SessionMessage, SessionMessagePart } from "@contextblocks/sessions";
import type { ContentPart, ToolSet } from "ai";

/** One step of a `generateText` result: what the model wrote and what its tools answered. */
interface StepContent<TOOLS extends ToolSet> {
  content: readonly ContentPart<TOOLS>[];
}

/**
 * The user's words as a stored message (an AI SDK `UIMessage`): the reminder that travels with a turn is
 * never part of it.
 */
export function userMessage(text: string): SessionMessage {
  return { id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }], createdAt: new Date() };
}

/**
 * The assistant's side of one turn as one stored `UIMessage`, the shape `useChat` keeps: a `step-start`
 * part per step, text and reasoning parts, and each tool call as a `tool-<name>` part holding its input
 * and its output (or error). `convertToModelMessages` turns it back into the assistant and tool messages
 * the model got.
 */
export function assistantMessage<TOOLS extends ToolSet>(
  steps: readonly StepContent<TOOLS>[],
): SessionMessage {
  const parts: SessionMessagePart[] = [];
  for (const step of steps) {
    parts.push({ type: "step-start" });
    const calls = new Map<string, SessionMessagePart & { errorText?: string }>();
    for (const part of step.content) {
      switch (part.type) {
        case "text":
          if (part.text.length > 0) parts.push({ type: "text", text: part.text, state: "done" });
          break;
        case "reasoning":
          if (part.text.length > 0) parts.push({ type: "reasoning", text: part.text, state: "done" });
          break;
        case "tool-call": {
          const call = {
            type: `tool-${part.toolName}`,
            toolCallId: part.toolCallId,
            state: "input-available",
            input: part.input,
          };
          calls.set(part.toolCallId, call);
          parts.push(call);
          break;
        }
        case "tool-result": {
          const call = calls.get(part.toolCallId);
          if (call === undefined) break;
          call.state = "output-available";
          call.output = part.output;
          break;
        }
        case "tool-error": {
          const call = calls.get(part.toolCallId);
          if (call === undefined) break;
          call.state = "output-error";
          call.errorText = part.error instanceof Error ? part.error.message : String(part.error);
          break;
        }
        default:
          // Sources, files and approval requests: this agent's tools and models produce none.
          break;
      }
    }
  }
  return { id: crypto.randomUUID(), role: "assistant", parts, createdAt: new Date() };
}

/** A message as one readable line or a few: its text, and its tool calls as `→ tool input` / `← output`. */
export function messageText(message: SessionMessage): string {
  const lines: string[] = [];
  for (const part of message.parts) {
    if (part.type === "text" && typeof part.text === "string") lines.push(part.text);
    else if (part.type.startsWith("tool-")) {
      const tool = part.type.slice("tool-".length);
      lines.push(`→ ${tool} ${JSON.stringify(part.input)}`);
      const errorText = (part as { errorText?: unknown }).errorText;
      if (part.state === "output-available") lines.push(`← ${tool}: ${outputText(part.output)}`);
      else if (typeof errorText === "string") lines.push(`← ${tool} failed: ${errorText}`);
    }
  }
  return lines.join("\n");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  const text = (output as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text : JSON.stringify(output);
}
