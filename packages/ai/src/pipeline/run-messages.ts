import { describeValue } from "@contextblocks/core/store-kit";
import type { ModelMessage } from "ai";
import { parseToolInput } from "../tool-input.js";
import type { ModelContent, RunMessage } from "./model-types.js";
import { invalidUse } from "./plugin-guard.js";

type AssistantPart = Extract<RunMessage, { role: "assistant" }>["content"][number];

/** The text parts of a message joined by newlines (a system message's content as it is). */
export function messageText(message: RunMessage | ModelMessage): string {
  if (typeof message.content === "string") return message.content;
  const texts: string[] = [];
  for (const part of message.content) if (part.type === "text") texts.push(part.text);
  return texts.join("\n");
}

const roles = new Set(["system", "user", "assistant", "tool"]);

/**
 * Refuses what a plugin hands over as messages (`extendMessages`, a transform's result, a history plugin's
 * `getMessages`) unless each has the shape a model call takes: a role of system, user, assistant or tool,
 * and content that is text (a system message's only form) or a list of parts with a `type`. Sent as it was,
 * a malformed message reached the model provider, which failed the call without naming the plugin, or not
 * at all. `where` names the call in the error.
 */
export function checkRunMessages(messages: unknown, where: string): void {
  if (!Array.isArray(messages)) {
    throw invalidUse(`${where} needs the messages as an array, got ${describeValue(messages)}.`);
  }
  messages.forEach((message: unknown, index) => {
    const problem = messageProblem(message);
    if (problem !== null) throw invalidUse(`${where}: message ${index} ${problem}.`);
  });
}

/**
 * What keeps `message` from being one a model call takes (`null` when nothing does): the rule `checkRunMessages`
 * names, and the one a stored message is revived by (run-message-decoding.ts).
 */
export function messageProblem(message: unknown): string | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return `is ${describeValue(message)}, not a message`;
  }
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (typeof role !== "string" || !roles.has(role)) {
    return `has role ${describeValue(role)}; a role is system, user, assistant or tool`;
  }
  if (typeof content === "string") {
    return role === "tool"
      ? "(tool) has text content; a tool message's content is an array of tool results"
      : null;
  }
  if (role === "system")
    return `(system) has content ${describeValue(content)}; a system message's content is text`;
  if (!Array.isArray(content))
    return `has content ${describeValue(content)}; content is text or an array of parts`;
  return partsProblem(content);
}

/** The first part of `parts` that is not an object with a string `type`, named (`null` when there is none). */
export function partsProblem(parts: readonly unknown[]): string | null {
  const index = parts.findIndex(
    (part: unknown) =>
      typeof part !== "object" || part === null || typeof (part as { type?: unknown }).type !== "string",
  );
  return index === -1 ? null : `has part ${index} ${describeValue(parts[index])} without a type`;
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
