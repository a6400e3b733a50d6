import { REMINDER_PREAMBLE, SECTION_RULE } from "@contextblocks/core";
import type { ModelMessage, UIMessage } from "ai";
import { type ContextMessage, isUIMessage } from "./messages.js";

/**
 * The message a reminder goes to: the newest user message. When the request continues a partial assistant
 * reply (the transcript ends with assistant or tool messages), that is the user message that asked for the
 * reply, the newest one before it. `-1` when there is no user message.
 */
export function reminderTargetIndex(messages: readonly ContextMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]?.role === "user") return index;
  }
  return -1;
}

const REMINDER_START = `${REMINDER_PREAMBLE}\n\n${SECTION_RULE}\n`;

/** A text part is a reminder when it starts as `context.reminder()` does: the preamble, then a section. */
export function isReminderText(text: string): boolean {
  return text.startsWith(REMINDER_START);
}

/**
 * Returns the messages with `reminder` as an extra text part at the end of the newest user message. The
 * input is never mutated; only that one message is copied. Reminder parts already on that message (from an
 * earlier call on the same messages) are dropped first, so calling twice does not duplicate it and a stale
 * reminder is replaced; when the message already ends with this very reminder it is returned unchanged.
 * `reminder` `null` removes a reminder part left on that message. Without a user message, nothing changes.
 */
export function attachReminder<M extends ContextMessage>(
  messages: readonly M[],
  reminder: string | null,
): M[] {
  const result = [...messages];
  const index = reminderTargetIndex(messages);
  const target = messages[index];
  if (target === undefined) return result;
  result[index] = (
    isUIMessage(target) ? withUIReminder(target, reminder) : withModelReminder(target, reminder)
  ) as M;
  return result;
}

function withModelReminder(message: ModelMessage, reminder: string | null): ModelMessage {
  if (message.role !== "user") return message;
  if (typeof message.content === "string") {
    if (reminder === null || message.content.endsWith(reminder)) return message;
    return {
      ...message,
      content: [
        { type: "text", text: message.content },
        { type: "text", text: reminder },
      ],
    };
  }
  const kept = message.content.filter((part) => part.type !== "text" || !isReminderText(part.text));
  const last = message.content.at(-1);
  const alreadyThere =
    reminder !== null &&
    kept.length === message.content.length - 1 &&
    last?.type === "text" &&
    last.text === reminder;
  if (alreadyThere) return message;
  if (reminder === null && kept.length === message.content.length) return message;
  return {
    ...message,
    content: reminder === null ? kept : [...kept, { type: "text", text: reminder }],
  };
}

function withUIReminder(message: UIMessage, reminder: string | null): UIMessage {
  const kept = message.parts.filter((part) => part.type !== "text" || !isReminderText(part.text));
  const last = message.parts.at(-1);
  const alreadyThere =
    reminder !== null &&
    kept.length === message.parts.length - 1 &&
    last?.type === "text" &&
    last.text === reminder;
  if (alreadyThere) return message;
  if (reminder === null && kept.length === message.parts.length) return message;
  return {
    ...message,
    parts: reminder === null ? kept : [...kept, { type: "text", text: reminder }],
  };
}
