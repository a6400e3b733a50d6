import { secureJsonParse } from "@ai-sdk/provider-utils";

/**
 * A tool call's input text as the AI SDK sends it back to the model on the next step, so a stored call
 * replays as the model saw it. The SDK parses the text with `secureJsonParse` (its own parser, used here):
 * a `__proto__` key, or a `constructor` holding a `prototype`, at any depth, is refused, so such a call is
 * invalid and goes back as `{}`, as does text that is not JSON; empty text is `{}` too. A provider that hands
 * over something other than text (no input, an object) gets `{}` as well: the SDK answers such a call with a
 * tool error and goes on, so storing the turn must not throw where the SDK does not.
 */
export function parseToolInput(text: unknown): unknown {
  if (typeof text !== "string" || text.trim() === "") return {};
  try {
    return secureJsonParse(text);
  } catch {
    return {};
  }
}
