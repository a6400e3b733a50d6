import { ContextError } from "@contextblocks/core";
import { describeValue, loneSurrogateIndex } from "@contextblocks/core/store-kit";

/**
 * One part of a message. The AI SDK's `UIMessage` parts fit as they are: text, reasoning, tool calls with
 * their input and output, files. Only `type` is required; the session reads `text` for search and token
 * estimates and stores everything else untouched.
 */
export interface SessionMessagePart {
  type: string;
  text?: string;
  reasoning?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  state?: string;
  result?: unknown;
}

/** A stored message: an AI SDK `UIMessage` is structurally one. */
export interface SessionMessage {
  id: string;
  role: string;
  parts: SessionMessagePart[];
  /** A `Date` when appended; a stored message reads back with the ISO string JSON made of it. */
  createdAt?: Date | string;
  /** Free-form (the AI SDK's `UIMessage.metadata`); summary messages carry their overlay's range here. */
  metadata?: unknown;
}

/** Longest message id accepted: ids are primary keys and appear in every path read. */
export const maximumMessageIdLength = 1_024;

/**
 * Longest role accepted: a role is a short word, and it is stored in its row beside the first 1.5 MiB of
 * the message (a Durable Object row holds at most 2 MB).
 */
const maximumRoleLength = 1_024;

/**
 * Checks that `value` is a `SessionMessage` (non-empty string id and role, an array of parts that each
 * have a string `type`) and returns it; otherwise a `ContextError` (`INVALID_INPUT`) naming the problem.
 */
export function checkSessionMessage(value: unknown, operation: string): SessionMessage {
  const fail = (problem: string): never => {
    throw new ContextError("INVALID_INPUT", `${operation}: not a SessionMessage: ${problem}`);
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return fail(`expected an object with id, role and parts, got ${describeValue(value)}`);
  }
  const message = value as Partial<SessionMessage>;
  if (typeof message.id !== "string" || message.id.length === 0) {
    return fail(`id must be a non-empty string, got ${describeValue(message.id)}`);
  }
  if (message.id.length > maximumMessageIdLength) {
    return fail(`id is ${message.id.length} characters long; the limit is ${maximumMessageIdLength}`);
  }
  checkWellFormed(message.id, "id", fail);
  if (typeof message.role !== "string" || message.role.length === 0) {
    return fail(
      `role of message "${message.id}" must be a non-empty string, got ${describeValue(message.role)}`,
    );
  }
  if (message.role.length > maximumRoleLength) {
    return fail(
      `role of message "${message.id}" is ${message.role.length} characters long; the limit is ${maximumRoleLength}`,
    );
  }
  checkWellFormed(message.role, `role of message "${message.id}"`, fail);
  if (!Array.isArray(message.parts)) {
    return fail(`parts of message "${message.id}" must be an array, got ${describeValue(message.parts)}`);
  }
  // By index, not `forEach`: a hole in a sparse array is a missing part too (JSON would store it as null).
  for (let index = 0; index < message.parts.length; index++) {
    const part: unknown = message.parts[index];
    if (typeof part !== "object" || part === null || typeof (part as { type?: unknown }).type !== "string") {
      fail(`part ${index} of message "${message.id}" must be an object with a string type`);
    }
  }
  return value as SessionMessage;
}

/** Checks a message id given on its own (a parent id, a leaf id). */
export function checkMessageId(value: unknown, what: string, operation: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: ${what} must be a non-empty string, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** The searchable text of a message: its text parts, joined by a space (what the FTS index holds). */
export function textOfMessage(message: SessionMessage): string {
  const texts: string[] = [];
  // A row another writer stored is read as it is: a part may be anything JSON holds.
  for (const part of message.parts as readonly unknown[]) {
    if (typeof part !== "object" || part === null) continue;
    const { type, text } = part as { type?: unknown; text?: unknown };
    if (type === "text" && typeof text === "string" && text.length > 0) texts.push(text);
  }
  return texts.join(" ");
}

/**
 * Stores keep UTF-8: an id with a lone surrogate would be stored changed, and two ids could alias; a role
 * would read back changed from its column (`getNode`, `getTree`, search hits).
 */
function checkWellFormed(text: string, what: string, fail: (problem: string) => never): void {
  const index = loneSurrogateIndex(text);
  if (index !== -1) fail(`${what} has a lone UTF-16 surrogate at index ${index}`);
}

/** Part types only the server writes (`@contextblocks/ai` stores a turn it cannot shape as one of these). */
export const serverOnlyPartTypes: readonly string[] = ["data-run-message"];

/** Where a message came from: `"client"` (a chat UI, anything a user controls) is not trusted. */
export interface AppendOptions {
  source?: "client" | "server" | undefined;
}

/**
 * The provider-metadata namespace contextblocks marks its own parts with (`@contextblocks/ai` marks the
 * reminder it attaches, and drops marked parts when it attaches the next one): only the server writes it.
 */
const serverMetadataNamespace = "contextblocks";

/**
 * A client-written message made safe to store: parts only the server writes are dropped, its `createdAt` (the
 * store records when it was written), the metadata keys the server reads (`compaction`) are removed, and so is
 * the `contextblocks` namespace of each part's
 * provider metadata (a client part marked as the reminder would be dropped from the model's view of the
 * turn); a role other than `user` or `assistant` is refused (`INVALID_INPUT`): a chat client never writes
 * system or tool messages. As agents' `source: "client"`.
 */
export function untrustedMessage(message: SessionMessage, operation: string): SessionMessage {
  if (message.role !== "user" && message.role !== "assistant") {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: a client-written message must have role "user" or "assistant", got ${describeValue(message.role)} (message "${message.id}")`,
    );
  }
  const parts = message.parts
    .filter((part) => !serverOnlyPartTypes.includes(part.type))
    .map(withoutServerMetadata);
  let metadata = message.metadata;
  if (
    typeof metadata === "object" &&
    metadata !== null &&
    !Array.isArray(metadata) &&
    "compaction" in metadata
  ) {
    const { compaction: _dropped, ...rest } = metadata as Record<string, unknown>;
    metadata = rest;
  }
  const cleaned: SessionMessage = { ...message, parts };
  // When a message was written is the server's word: a client's `createdAt` would choose the day its message
  // shows in search results and in `session_search`'s day labels.
  delete cleaned.createdAt;
  if (metadata === undefined) delete cleaned.metadata;
  else cleaned.metadata = metadata;
  return cleaned;
}

/** The part without the `contextblocks` namespace of its provider metadata (the same part when it has none). */
function withoutServerMetadata<P extends SessionMessage["parts"][number]>(part: P): P {
  const metadata = (part as { providerMetadata?: unknown }).providerMetadata;
  if (
    typeof metadata !== "object" ||
    metadata === null ||
    !Object.hasOwn(metadata, serverMetadataNamespace)
  ) {
    return part;
  }
  const { [serverMetadataNamespace]: _dropped, ...rest } = metadata as Record<string, unknown>;
  return { ...part, providerMetadata: rest };
}
