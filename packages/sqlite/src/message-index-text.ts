import { wellFormedPrefix } from "@contextblocks/core/store-kit";
import { type SessionMessage, textOfMessage } from "@contextblocks/sessions";
import { parseStoredMessage } from "@contextblocks/sessions/store-kit";
import { messageFieldsOf } from "@contextblocks/text";
import type { IndexedMessage } from "./message-search.js";

/**
 * The text the message search index holds for a message: its text parts, at most `maximumIndexedChars`
 * characters (an FTS5 row stores its text, and a Durable Object row holds at most 2 MB). The one place that
 * decides what a message is indexed as. A message the session layer stored comes with its searchable text
 * (`MessageRecord.text`); a row another writer stored (agents@0.22.0) is read from its JSON here.
 */
export const maximumIndexedChars = 256 * 1024;

/** A message's search row fields: its indexed text, its speaker and its day (`messageFieldsOf`). */
export function indexedMessageOf(
  message: SessionMessage,
  text: string = textOfMessage(message),
): IndexedMessage {
  const indexed = wellFormedPrefix(text, maximumIndexedChars);
  return { text: indexed, ...messageFieldsOf(message, indexed) };
}

/**
 * The search row fields of a stored message's JSON: its speaker and day are read from the message, its
 * text is `text` when given (what the session layer computed), else the message's text parts.
 */
export function indexedJsonOf(json: string, role: string, text?: string): IndexedMessage {
  const message = parseStoredMessage(json);
  if (message === null) return indexedMessageOf({ id: "", role, parts: [] }, text ?? "");
  return indexedMessageOf(message, text);
}
