import type { RunMessage } from "./model-types.js";

type ContentPart = Exclude<RunMessage, { role: "system" }>["content"][number];
type ToolResultPart = Extract<ContentPart, { type: "tool-result" }>;

/**
 * What the model reads in place of a result not stored (yet): the turn was cut off, or an overlapping turn's
 * tool is still running (its result joins the call when it comes).
 */
export const interruptedToolResult =
  "No result was stored for this tool call: its turn was interrupted, or it is still running in another turn. It may or may not have taken effect; check before calling it again.";

/**
 * The prompt with a result for every tool call left without one. A turn cut off between a tool call and its
 * result (a process killed, two turns overlapping) leaves the call in the transcript; OpenAI and Anthropic
 * refuse a prompt where a user or system message, or the end, follows a call without its result, so every
 * later turn of the session would fail. Each such call gets an error result, placed where the SDK expects
 * results: before the message that ends the run of assistant and tool messages. A call the provider ran
 * carries its result in the same message and is left as it is.
 */
export function closeInterruptedToolCalls(messages: readonly RunMessage[]): RunMessage[] {
  const pending = new Map<string, string>();
  const closed: RunMessage[] = [];
  const settle = () => {
    if (pending.size === 0) return;
    const content: ToolResultPart[] = [...pending].map(([toolCallId, toolName]) => ({
      type: "tool-result",
      toolCallId,
      toolName,
      output: { type: "error-text", value: interruptedToolResult },
    }));
    closed.push({ role: "tool", content } as RunMessage);
    pending.clear();
  };
  for (const message of messages) {
    if (message.role === "assistant" && Array.isArray(message.content)) {
      for (const part of message.content) {
        if (part.type === "tool-call" && part.providerExecuted !== true)
          pending.set(part.toolCallId, part.toolName);
        if (part.type === "tool-result") pending.delete(part.toolCallId);
      }
    } else if (message.role === "tool") {
      for (const part of message.content) if (part.type === "tool-result") pending.delete(part.toolCallId);
    } else {
      settle();
    }
    closed.push(message);
  }
  settle();
  return closed;
}
