import { neutralizeContent } from "@contextblocks/core/store-kit";
import type { ModelMessage, UIMessage } from "ai";
import { type ContextMessage, isUIMessage } from "./messages.js";
import { isReminderPart } from "./reminder-placement.js";

/**
 * The messages with every rule line (a line opening with `═`, the prompt's section rule) in a user's text and
 * in a tool's text result written with `=` first, as a block's content is rendered. A user who types the
 * reminder's words and a `SOUL [readonly]` section between rules, or a tool that hands back text someone else
 * wrote (a fetched page, a shared skill), would otherwise send the model a section that reads like ours and
 * "replaces" a read-only block.
 *
 * The reminder is the only text that keeps its rules: the marked parts of `reminderTarget` (the message
 * `attachReminder` places this turn's reminder on, which drops every marked part there but this turn's very
 * reminder) are left to it; anywhere else a part that claims the mark (provider metadata, which a chat client
 * can write) is a user's text like any other. Tool results are read where they are text (`text`, `error-text`,
 * the text items of `content`, a UI tool part's text output or error); a JSON result reaches the model
 * serialized, its line breaks escaped, so it cannot open a line. The same text gives the same bytes on every
 * turn, so the history's cached prefix holds; a message without such a line is returned as it is (the same
 * object). The messages are well formed (`checkTurnMessages`).
 */
export function withSectionsNeutralized<M extends ContextMessage>(
  messages: readonly M[],
  reminderTarget = -1,
): M[] {
  return messages.map((message, index) => {
    const ui = isUIMessage(message);
    if (message.role === "user") {
      const keepMarked = index === reminderTarget;
      const text = (part: Part) => (keepMarked && isReminderPart(part) ? part : neutralizedText(part));
      return (ui ? withParts(message, text) : withContent(message as ModelMessage, text)) as M;
    }
    if (message.role === "assistant" || message.role === "tool") {
      return (
        ui ? withParts(message, neutralizedToolPart) : withContent(message, neutralizedToolResult)
      ) as M;
    }
    return message;
  });
}

type Part = { type: string } & Record<string, unknown>;

/** The message with `change` applied to each part; the same message when no part changed. */
function withParts(message: UIMessage, change: (part: Part) => Part): UIMessage {
  const parts = changedParts(message.parts as unknown as Part[], change);
  return parts === null ? message : { ...message, parts: parts as unknown as UIMessage["parts"] };
}

function withContent(message: ModelMessage, change: (part: Part) => Part): ModelMessage {
  if (typeof message.content === "string") {
    if (message.role !== "user") return message;
    const text = neutralizeContent(message.content);
    return text === message.content ? message : { ...message, content: text };
  }
  const content = changedParts(message.content as unknown as Part[], change);
  return content === null ? message : ({ ...message, content } as unknown as ModelMessage);
}

function changedParts(parts: readonly Part[], change: (part: Part) => Part): Part[] | null {
  let changed = false;
  const result = parts.map((part) => {
    const next = change(part);
    if (next !== part) changed = true;
    return next;
  });
  return changed ? result : null;
}

/** A `text` part with its rule lines broken; any other part as it is. */
function neutralizedText(part: Part): Part {
  return part.type === "text" ? withNeutral(part, "text") : part;
}

/** A tool result (model messages) with the text of its output neutralized. */
function neutralizedToolResult(part: Part): Part {
  if (part.type !== "tool-result" || typeof part.output !== "object" || part.output === null) return part;
  const output = part.output as Part & { value?: unknown };
  let next: Part = output;
  if (output.type === "text" || output.type === "error-text") next = withNeutral(output, "value");
  else if (output.type === "content" && Array.isArray(output.value)) {
    const value = changedParts(output.value as Part[], (item) =>
      item?.type === "text" ? withNeutral(item, "text") : item,
    );
    if (value !== null) next = { ...output, value };
  }
  return next === output ? part : { ...part, output: next };
}

/** A UI tool part (`tool-<name>`, `dynamic-tool`) with its text output and error neutralized. */
function neutralizedToolPart(part: Part): Part {
  if (!(part.type.startsWith("tool-") || part.type === "dynamic-tool")) return part;
  return withNeutral(withNeutral(part, "output"), "errorText");
}

/** `part` with its string field `key` neutralized; the same part when it has none or nothing changes. */
function withNeutral(part: Part, key: string): Part {
  const value = part[key];
  if (typeof value !== "string") return part;
  const neutral = neutralizeContent(value);
  return neutral === value ? part : { ...part, [key]: neutral };
}
