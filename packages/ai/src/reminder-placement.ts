import type { ModelMessage, UIMessage } from "ai";
import { type ContextMessage, isUIMessage } from "./messages.js";

/**
 * The reminder part is marked in its provider options (model messages) or provider metadata (UI messages,
 * which `convertToModelMessages` turns into provider options): something only code sets, never a user's
 * typing. Parts are recognised by this mark alone, never by their words, so user text that starts like a
 * reminder stays. Providers ignore option namespaces they do not know.
 */

type Marked = { providerOptions?: unknown; providerMetadata?: unknown };

/** True for a text part this package added as the reminder. */
export function isReminderPart(part: { type: string } & Marked): boolean {
  if (part.type !== "text") return false;
  const options = (part.providerOptions ?? part.providerMetadata) as
    | { contextblocks?: { reminder?: unknown } }
    | undefined;
  return options?.contextblocks?.reminder === true;
}

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

/**
 * Returns the messages with `reminder` as an extra, marked text part at the end of the newest user
 * message. The input is never mutated; only that one message is copied. Reminder parts already on that
 * message (from an earlier call on the same messages) are dropped first, so calling twice does not
 * duplicate it and a stale reminder is replaced; when the message already ends with this very reminder it
 * is returned unchanged. `reminder` `null` removes a reminder part left on that message. Without a user
 * message, nothing changes.
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

/** The parts without reminder parts, with `reminder` appended as a marked part; `null` when unchanged. */
function replaced<P extends { type: string } & Marked>(
  parts: readonly P[],
  reminder: string | null,
  make: (text: string) => P,
): P[] | null {
  const kept = parts.filter((part) => !isReminderPart(part));
  const last = parts.at(-1) as (P & { text?: unknown }) | undefined;
  const alreadyThere =
    reminder !== null &&
    kept.length === parts.length - 1 &&
    last !== undefined &&
    isReminderPart(last) &&
    last.text === reminder;
  if (alreadyThere) return null;
  if (reminder === null && kept.length === parts.length) return null;
  return reminder === null ? kept : [...kept, make(reminder)];
}

function withModelReminder(message: ModelMessage, reminder: string | null): ModelMessage {
  if (message.role !== "user") return message;
  const parts =
    typeof message.content === "string"
      ? [{ type: "text" as const, text: message.content }]
      : message.content;
  const next = replaced(parts, reminder, (text) => ({
    type: "text" as const,
    text,
    providerOptions: { contextblocks: { reminder: true } },
  }));
  return next === null ? message : { ...message, content: next };
}

function withUIReminder(message: UIMessage, reminder: string | null): UIMessage {
  const next = replaced(message.parts, reminder, (text) => ({
    type: "text" as const,
    text,
    providerMetadata: { contextblocks: { reminder: true } },
  }));
  return next === null ? message : { ...message, parts: next };
}
