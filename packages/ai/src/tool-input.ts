import { secureJsonParse } from "@ai-sdk/provider-utils";

/**
 * A tool call's input text as the AI SDK sends it back to the model on the next step, so a stored call
 * replays as the model saw it. The SDK parses the text with `secureJsonParse` (its own parser, used here):
 * a `__proto__` key, or a `constructor` holding a `prototype`, at any depth, is refused, so such a call is
 * invalid and goes back as `{}`, as does text that is not JSON; empty text is `{}` too.
 */
export function parseToolInput(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return secureJsonParse(text);
  } catch {
    return {};
  }
}
