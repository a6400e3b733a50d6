import { ContextError } from "@contextblocks/core";
import { type SqlStatement, sql } from "@contextblocks/sql";

/**
 * Durable Object SQLite refuses a string, BLOB or row over 2 MB (`SQLITE_TOOBIG`). A message whose stored
 * JSON is larger than `inlineRowBytes` keeps its first slice in its `assistant_messages` row and the rest in
 * numbered `assistant_message_chunks` rows (as Cloudflare agents' `agents/sessions` does with its 1.5 MiB
 * row budget); reads join the slices back, byte for byte. The common message fits in one row.
 */
export const inlineRowBytes = 1536 * 1024;

/** The largest message a SQLite session store keeps (its stored JSON, in UTF-8 bytes): 32 MiB. */
export const maximumMessageBytes = 32 * 1024 * 1024;

/**
 * Slices of `json` of at most `budget` UTF-8 bytes each, never splitting a surrogate pair; joined they give
 * `json` back. Refuses a message over `maximumMessageBytes` with `INVALID_INPUT`.
 */
export function sliceStoredMessage(json: string, messageId: string, budget = inlineRowBytes): string[] {
  const slices: string[] = [];
  let start = 0;
  let bytes = 0;
  let total = 0;
  for (let index = 0; index < json.length; ) {
    const code = json.charCodeAt(index);
    let width = 3;
    let step = 1;
    if (code < 0x80) width = 1;
    else if (code < 0x800) width = 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < json.length) {
      const low = json.charCodeAt(index + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        width = 4;
        step = 2;
      }
    }
    if (bytes > 0 && bytes + width > budget) {
      slices.push(json.slice(start, index));
      start = index;
      bytes = 0;
    }
    bytes += width;
    total += width;
    index += step;
  }
  if (total > maximumMessageBytes) {
    throw new ContextError(
      "INVALID_INPUT",
      `appendMessage: message "${messageId}" is ${total} bytes as stored JSON; a SQLite session store keeps messages up to ${maximumMessageBytes} bytes (32 MiB)`,
    );
  }
  slices.push(json.slice(start));
  return slices;
}

/**
 * The `assistant_message_chunks` rows of a message's slices after the first (its row holds the first), as
 * an update writes them; an append writes `appendedContinuationRows`.
 */
export function continuationRows(messageId: string, slices: readonly string[]): SqlStatement[] {
  return slices.slice(1).map(
    (slice, index) => sql`INSERT OR REPLACE INTO assistant_message_chunks (id, idx, content)
      VALUES (${messageId}, ${index + 1}, ${slice})`,
  );
}

/** No stored message has this id (ids are unique across sessions). */
function unstored(messageId: string): SqlStatement {
  return sql`NOT EXISTS (SELECT 1 FROM assistant_messages WHERE id = ${messageId})`;
}

/**
 * The continuation rows an append writes before its insert, written only while no message with the id is
 * stored: an append refused as a duplicate (in this session or another) must not replace the stored
 * message's rows. Rows an earlier refused or interrupted append of the id left are removed first, so they
 * are never read back as part of this message.
 */
export function appendedContinuationRows(messageId: string, slices: readonly string[]): SqlStatement[] {
  return [
    unstoredChunksDeletion(messageId),
    ...slices.slice(1).map(
      (slice, index) => sql`INSERT OR REPLACE INTO assistant_message_chunks (id, idx, content)
        SELECT ${messageId}, ${index + 1}, ${slice} WHERE ${unstored(messageId)}`,
    ),
  ];
}

/** Removes the continuation rows of an id no stored message has (what a refused append wrote). */
export function unstoredChunksDeletion(messageId: string): SqlStatement {
  return sql`DELETE FROM assistant_message_chunks WHERE id = ${messageId} AND ${unstored(messageId)}`;
}
