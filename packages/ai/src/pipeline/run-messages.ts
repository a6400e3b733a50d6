import type { ModelMessage } from "ai";
import { parseToolInput } from "../tool-input.js";
import type { ModelContent, RunMessage } from "./model-types.js";

type AssistantPart = Extract<RunMessage, { role: "assistant" }>["content"][number];

/** The text parts of a message joined by newlines (a system message's content as it is). */
export function messageText(message: RunMessage | ModelMessage): string {
  if (typeof message.content === "string") return message.content;
  const texts: string[] = [];
  for (const part of message.content) if (part.type === "text") texts.push(part.text);
  return texts.join("\n");
}

/**
 * A message as the model receives it: `ModelMessage`s (what `response.messages` gives, what many stores
 * hold) may carry a string `content`, which becomes one text part. Everything else passes as it is.
 */
export function toRunMessage(message: RunMessage | ModelMessage): RunMessage {
  if (message.role !== "system" && typeof message.content === "string") {
    const content = [{ type: "text" as const, text: message.content }];
    return { ...message, content } as RunMessage;
  }
  return message as RunMessage;
}

/**
 * The response of one model call as messages: one assistant message with its text, reasoning, files, tool
 * calls (input parsed from the JSON the model sent) and provider-executed tool results; `[]` when the
 * model returned nothing. Sources and approval requests are not part of a transcript and are left out.
 */
export function responseMessages(content: readonly ModelContent[]): RunMessage[] {
  const parts: AssistantPart[] = [];
  for (const item of content) {
    const options =
      item.type !== "source" && item.providerMetadata ? { providerOptions: item.providerMetadata } : {};
    switch (item.type) {
      case "text":
        if (item.text.length > 0) parts.push({ type: "text", text: item.text, ...options });
        break;
      case "reasoning":
        parts.push({ type: "reasoning", text: item.text, ...options });
        break;
      case "file":
        parts.push({ type: "file", data: item.data, mediaType: item.mediaType, ...options });
        break;
      case "tool-call":
        parts.push({
          type: "tool-call",
          toolCallId: item.toolCallId,
          toolName: item.toolName,
          input: parseToolInput(item.input),
          ...(item.providerExecuted ? { providerExecuted: true } : {}),
          ...options,
        });
        break;
      case "tool-result":
        if (item.preliminary) break;
        parts.push({
          type: "tool-result",
          toolCallId: item.toolCallId,
          toolName: item.toolName,
          output: item.isError
            ? { type: "error-json", value: item.result }
            : { type: "json", value: item.result },
          ...options,
        });
        break;
      default:
        break;
    }
  }
  return parts.length === 0 ? [] : [{ role: "assistant", content: parts }];
}
