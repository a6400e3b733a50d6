import { wellFormedPrefix } from "@contextblocks/core/store-kit";
import { type SessionMessage, textOfMessage } from "@contextblocks/sessions";
import { parseStoredMessage } from "@contextblocks/sessions/store-kit";
import { utf8Bytes, utf8Prefix } from "@contextblocks/sql/store-kit";
import { messageFieldsOf, searchableText } from "@contextblocks/text";
import type { IndexedMessage } from "./message-search.js";

/**
 * The text the message search index holds for a message: its text parts, at most `maximumIndexedChars`
 * characters and `maximumIndexedBytes` bytes of UTF-8 (`indexedText`). The one place that decides what a
 * message is indexed as. A message the session layer stored comes with its searchable text
 * (`MessageRecord.text`); a row another writer stored (agents@0.22.0) is read from its JSON here.
 */
export const maximumIndexedChars = 256 * 1024;

/**
 * A search row holds its message's text and, as context, its parent's and grandparent's: three indexed texts,
 * which with the row's ids must fit a Durable Object's 2 MB row (`maxRowBytes`). 256K characters of CJK text
 * are 786 KB, and three in a row were refused with a bare SQLITE_TOOBIG. Text of one or two bytes a character
 * is cut at `maximumIndexedChars` first, as before.
 */
const maximumIndexedBytes = 600_000;

/**
 * The start of `text` the index holds: at most `maximumIndexedChars` characters and, with the words it holds in
 * a compatibility form (`searchableText`: "ｔｉｄｅ" or "ti\u00adde" is found by "tide"; a hit's text is read
 * back without them), `maximumIndexedBytes` bytes.
 */
function indexedText(text: string): string {
  const start = utf8Prefix(wellFormedPrefix(text, maximumIndexedChars), maximumIndexedBytes);
  const indexed = searchableText(start);
  const over = utf8Bytes(indexed) - maximumIndexedBytes;
  // The words fit within the bytes too: the text gives up as many (a shorter start has no more words).
  return over > 0 ? searchableText(utf8Prefix(start, Math.max(0, utf8Bytes(start) - over))) : indexed;
}

/** A message's search row fields: its indexed text, its speaker and its day (`messageFieldsOf`). */
export function indexedMessageOf(
  message: SessionMessage,
  text: string = textOfMessage(message),
): IndexedMessage {
  const indexed = indexedText(text);
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
