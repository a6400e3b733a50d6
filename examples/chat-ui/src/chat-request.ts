/** Longest user message accepted, in characters. */
export const MAX_MESSAGE_LENGTH = 8_000;
/**
 * The largest request body read, in bytes (useChat sends the whole history with each message). Kept here, not
 * in index.ts: workerd serves every named export of the Worker's main module, and refuses to start on a number.
 */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** The most messages a request may carry (useChat sends the whole history; only the last one is read). */
const MAX_MESSAGES = 10_000;

/** What the route takes from a useChat request: the new message's text and what the client asked for. */
export interface ChatTurn {
  /** `submit-message`: answer a new message. `regenerate-message`: answer the last question again. */
  trigger: "submit-message" | "regenerate-message";
  /** The new user message's text (for a regenerate, the stored question is used instead). */
  text: string;
}

/** A request the route refuses, with a message that names what is wrong and its HTTP status. */
export class ChatRequestError extends Error {
  override name = "ChatRequestError";
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/**
 * Reads the body `useChat` (the AI SDK's `DefaultChatTransport`) sends: `{ id, messages, trigger,
 * messageId }`. The client's copy of the history is untrusted and ignored (the session holds the real one);
 * only the last message is read, and only its text parts.
 */
export function readChatTurn(body: unknown): ChatTurn {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ChatRequestError("expected a JSON object with `messages` (the body useChat sends)");
  }
  const { messages, trigger = "submit-message" } = body as { messages?: unknown; trigger?: unknown };
  if (trigger !== "submit-message" && trigger !== "regenerate-message") {
    throw new ChatRequestError(
      `trigger must be "submit-message" or "regenerate-message", got ${describe(trigger)}`,
    );
  }
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_MESSAGES) {
    throw new ChatRequestError(`messages must be an array of 1 to ${MAX_MESSAGES} messages`);
  }
  if (trigger === "regenerate-message") return { trigger, text: "" };
  const last: unknown = messages.at(-1);
  if (typeof last !== "object" || last === null)
    throw new ChatRequestError("the last message is not an object");
  const { role, parts } = last as { role?: unknown; parts?: unknown };
  if (role !== "user")
    throw new ChatRequestError(`the last message must be the user's, got role ${describe(role)}`);
  if (!Array.isArray(parts)) throw new ChatRequestError("the last message has no parts array");
  const texts = parts.map((part: unknown) => {
    const { type, text } = (typeof part === "object" && part !== null ? part : {}) as {
      type?: unknown;
      text?: unknown;
    };
    if (type !== "text" || typeof text !== "string") {
      throw new ChatRequestError(`this chat takes text parts only, got a part of type ${describe(type)}`);
    }
    return text;
  });
  const text = texts.join("\n").trim();
  if (text.length === 0) throw new ChatRequestError("the message is empty");
  if (text.length > MAX_MESSAGE_LENGTH) {
    throw new ChatRequestError(
      `the message is ${text.length} characters; at most ${MAX_MESSAGE_LENGTH} are accepted`,
    );
  }
  return { trigger, text };
}

function describe(value: unknown): string {
  return typeof value === "string"
    ? JSON.stringify(value.slice(0, 40))
    : value === undefined
      ? "none"
      : typeof value;
}
