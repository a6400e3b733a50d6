import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { SessionMessage, SessionMessagePart } from "./message.js";

/** States in which a tool part carries the call's outcome (the AI SDK's `UIMessage` tool part states). */
const answeredStates = new Set(["output-available", "output-error"]);

/**
 * What a client's rewrite of a stored message may change, as `useChat`'s `addToolResult` needs and no more:
 * a client never changes a stored message's role; it may rewrite its own (`user`) messages; in any other
 * message (written by the server: the model's answers, system text) it may only supply the outcome of a tool
 * call that still waits for one (state `input-available`), matched by `toolCallId`. Everything else the
 * server stored stays as it was, whatever the client sent.
 */
export function clientRewrite(
  stored: SessionMessage,
  client: SessionMessage,
  operation: string,
): SessionMessage {
  if (client.role !== stored.role) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: message "${stored.id}" is stored with role ${describeValue(stored.role)}; a client-written update cannot change it to ${describeValue(client.role)}`,
    );
  }
  if (stored.role === "user") return client;
  const answers = new Map<string, SessionMessagePart>();
  for (const part of client.parts) {
    if (typeof part.toolCallId === "string" && answeredStates.has(part.state ?? ""))
      answers.set(part.toolCallId, part);
  }
  return { ...stored, parts: stored.parts.map((part) => withClientOutcome(part, answers)) };
}

function withClientOutcome(
  part: SessionMessagePart,
  answers: ReadonlyMap<string, SessionMessagePart>,
): SessionMessagePart {
  if (typeof part.toolCallId !== "string" || part.state !== "input-available") return part;
  const answer = answers.get(part.toolCallId);
  if (answer === undefined || answer.type !== part.type) return part;
  const answered: SessionMessagePart & { errorText?: unknown } = { ...part, state: answer.state as string };
  if (answer.state === "output-available") answered.output = answer.output;
  else answered.errorText = (answer as { errorText?: unknown }).errorText;
  return answered;
}
