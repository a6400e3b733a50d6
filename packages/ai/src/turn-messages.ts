import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import { messageProblem, partsProblem } from "./pipeline/run-messages.js";

const uiRoles = new Set(["system", "user", "assistant"]);

/**
 * What keeps `message` from being one `prepareContextTurn` takes (`null` when nothing does): a UI message (a
 * role of system, user or assistant and a list of parts, each with a `type`) or a model message (the rule a
 * model call's messages follow, `messageProblem`).
 */
export function turnMessageProblem(message: unknown): string | null {
  if (typeof message !== "object" || message === null || Array.isArray(message) || !("parts" in message)) {
    return messageProblem(message);
  }
  const { role, parts } = message as { role?: unknown; parts?: unknown };
  if (typeof role !== "string" || !uiRoles.has(role)) {
    return `has role ${describeValue(role)}; a UI message's role is system, user or assistant`;
  }
  if (!Array.isArray(parts)) return `has parts ${describeValue(parts)}; parts is an array`;
  return partsProblem(parts);
}

/**
 * Refuses messages `prepareContextTurn` cannot read, naming the first problem (`INVALID_INPUT`): a chat
 * client's transcript is often passed straight in, and a malformed part failed deep inside with a `TypeError`.
 */
export function checkTurnMessages(messages: unknown): void {
  if (!Array.isArray(messages)) {
    throw new ContextError(
      "INVALID_INPUT",
      `prepareContextTurn: messages must be an array of messages, got ${describeValue(messages)}`,
    );
  }
  messages.forEach((message: unknown, index) => {
    const problem = turnMessageProblem(message);
    if (problem !== null) {
      throw new ContextError("INVALID_INPUT", `prepareContextTurn: message ${index} ${problem}`);
    }
  });
}
