import { ContextError } from "@contextblocks/core";
import { clipped } from "@contextblocks/core/store-kit";

/**
 * What an append does with a message id that is already stored, the same on every backend: ids are unique
 * across the sessions of one database (as `assistant_messages.id` is the primary key in Cloudflare agents'
 * Sessions API). An identical retry (same session, id, parent and stored content: an append whose write
 * committed but whose answer was lost) succeeds without a second row; any other append of a stored id is
 * refused with `INVALID_INPUT` and stores nothing.
 */

/** The stored row that holds an id, as an append reads it back. */
export interface StoredIdHolder {
  sessionId: string;
  parentId: string | null;
  /** The stored text of the message (`serializeMessage`), continuation rows joined. */
  content: string;
}

/** The append that met a stored id: its session, its parent (`undefined`: the latest leaf) and content. */
export interface AppendAttempt {
  sessionId: string;
  parentId: string | null | undefined;
  content: string;
}

/**
 * True when `attempt` is the append that stored `holder` again. An omitted parent matches any: the retry
 * cannot know which leaf the first attempt went under, and the leaf is now the message itself.
 */
export function isIdenticalRetry(holder: StoredIdHolder, attempt: AppendAttempt): boolean {
  return (
    holder.sessionId === attempt.sessionId &&
    (attempt.parentId === undefined || attempt.parentId === holder.parentId) &&
    holder.content === attempt.content
  );
}

/**
 * The refusal of an append whose id `holder` has (not an identical retry). Another session is not named:
 * message ids may come from a client, and the refusal must not tell it which sessions exist.
 */
export function storedIdError(
  operation: string,
  id: string,
  holder: StoredIdHolder,
  attempt: AppendAttempt,
): ContextError {
  const where =
    holder.sessionId === attempt.sessionId
      ? `this session ("${clipped(holder.sessionId)}") with other content or another parent`
      : "another session; ids are unique across the sessions of a database";
  return new ContextError(
    "INVALID_INPUT",
    `${operation}: a message with id "${clipped(id)}" already exists in ${where}; nothing was stored (use updateMessage to change it, or another id)`,
  );
}
