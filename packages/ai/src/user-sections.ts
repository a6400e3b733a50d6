import { neutralizeContent } from "@contextblocks/core/store-kit";
import type { ModelMessage, UIMessage } from "ai";
import { type ContextMessage, isUIMessage } from "./messages.js";
import { isReminderPart } from "./reminder-placement.js";

/**
 * The messages with every rule line (a line opening with `═`, the prompt's section rule) in a user's text
 * written with `=` first, as a block's content is rendered: a user who types the reminder's words and a
 * `SOUL [readonly]` section between rules would otherwise send the model a section that reads like ours
 * and "replaces" a read-only block. The reminder is the only text that keeps its rules: the marked parts of
 * `reminderTarget` (the message `attachReminder` places this turn's reminder on, which drops every marked
 * part there but this turn's very reminder) are left to it; anywhere else a part that claims the mark (it
 * is provider metadata, which a chat client can write) is a user's text like any other. The same text gives
 * the same bytes on every turn, so the history's cached prefix holds; a message with no such line is
 * returned as it is (the same object).
 */
export function withUserSectionsNeutralized<M extends ContextMessage>(
  messages: readonly M[],
  reminderTarget = -1,
): M[] {
  return messages.map((message, index) => {
    if (message.role !== "user") return message;
    const keepMarked = index === reminderTarget;
    return (
      isUIMessage(message) ? neutralizedUI(message, keepMarked) : neutralizedModel(message, keepMarked)
    ) as M;
  });
}

function neutralizedModel(message: ModelMessage, keepMarked: boolean): ModelMessage {
  if (message.role !== "user") return message;
  if (typeof message.content === "string") {
    const text = neutralizeContent(message.content);
    return text === message.content ? message : { ...message, content: text };
  }
  const parts = neutralizedParts(message.content, keepMarked);
  return parts === null ? message : { ...message, content: parts as typeof message.content };
}

function neutralizedUI(message: UIMessage, keepMarked: boolean): UIMessage {
  const parts = neutralizedParts(message.parts, keepMarked);
  return parts === null ? message : { ...message, parts: parts as UIMessage["parts"] };
}

/** The parts with each text part neutralized (marked ones kept with `keepMarked`); `null` when none changed. */
function neutralizedParts<P extends { type: string }>(parts: readonly P[], keepMarked: boolean): P[] | null {
  // Messages from a client may be malformed: what is not a list of parts is left to whoever reads it next.
  if (!Array.isArray(parts)) return null;
  let changed = false;
  const result = parts.map((part) => {
    if (typeof part !== "object" || part === null || part.type !== "text") return part;
    if (keepMarked && isReminderPart(part)) return part;
    const text = (part as P & { text?: unknown }).text;
    if (typeof text !== "string") return part;
    const neutral = neutralizeContent(text);
    if (neutral === text) return part;
    changed = true;
    return { ...part, text: neutral };
  });
  return changed ? result : null;
}
