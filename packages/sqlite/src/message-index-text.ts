import { type SessionMessage, textOfMessage } from "@contextblocks/sessions";
import { messageFieldsOf } from "@contextblocks/text";
import type { IndexedMessage } from "./message-search.js";

/**
 * The text the message search index holds for a message: its text parts, at most `maximumIndexedChars`
 * characters (an FTS5 row stores its text, and a Durable Object row holds at most 2 MB). The one place that
 * decides what a message is indexed as; the index is built from it lazily, at search time.
 */
export const maximumIndexedChars = 256 * 1024;

export function indexTextOf(message: SessionMessage): string {
  const text = textOfMessage(message);
  if (text.length <= maximumIndexedChars) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(maximumIndexedChars - 1))
    ? maximumIndexedChars - 1
    : maximumIndexedChars;
  return text.slice(0, end);
}

/** A message's search row fields: its indexed text, its speaker and its day (`messageFieldsOf`). */
export function indexedMessageOf(message: SessionMessage): IndexedMessage {
  const text = indexTextOf(message);
  return { text, ...messageFieldsOf(message, text) };
}
