import { wellFormedPrefix } from "@contextblocks/core/store-kit";
import { type SessionMessage, textOfMessage } from "@contextblocks/sessions";
import { parseStoredMessage } from "@contextblocks/sessions/store-kit";
import { messageFieldsOf } from "@contextblocks/text";
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

/** The start of `text` the index holds: at most `maximumIndexedChars` characters and `maximumIndexedBytes` bytes. */
function indexedText(text: string): string {
  const prefix = wellFormedPrefix(text, maximumIndexedChars);
  let bytes = 0;
  for (let index = 0; index < prefix.length; index++) {
    const unit = prefix.charCodeAt(index);
    const pair = unit >= 0xd800 && unit <= 0xdbff && (prefix.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
    // UTF-8 widths as `utf8Bytes` counts them (a lone surrogate is stored as U+FFFD, 3 bytes).
    bytes += unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
    // Cut before the character that passes the bound: never inside a pair.
    if (bytes > maximumIndexedBytes) return prefix.slice(0, index);
    if (pair) index++;
  }
  return prefix;
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
