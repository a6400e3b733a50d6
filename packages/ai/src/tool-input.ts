import { secureJsonParse } from "@ai-sdk/provider-utils";

/**
 * The deepest nesting of arrays and objects a stored tool call's input keeps. Real tool inputs nest a few
 * levels; one nested thousands deep (a model's `[[[[…]]]]`) parses, but storing the turn walks it
 * recursively and ran out of stack (a `RangeError` out of generateText) where the SDK alone went on.
 */
export const maximumToolInputDepth = 100;

/**
 * A tool call's input text as the AI SDK sends it back to the model on the next step, so a stored call
 * replays as the model saw it. The SDK parses the text with `secureJsonParse` (its own parser, used here):
 * a `__proto__` key, or a `constructor` holding a `prototype`, at any depth, is refused, so such a call is
 * invalid and goes back as `{}`, as does text that is not JSON; empty text is `{}` too. A provider that hands
 * over something other than text (no input, an object) gets `{}` as well: the SDK answers such a call with a
 * tool error and goes on, so storing the turn must not throw where the SDK does not. Input nested deeper
 * than `maximumToolInputDepth` is kept as `{}` for the same reason (the tool itself saw it whole).
 */
export function parseToolInput(text: unknown): unknown {
  if (typeof text !== "string" || text.trim() === "") return {};
  let input: unknown;
  try {
    input = secureJsonParse(text);
  } catch {
    return {};
  }
  return nestsDeeperThan(input, maximumToolInputDepth) ? {} : input;
}

/** Whether arrays and objects in `value` nest deeper than `limit`; a loop, so any depth is measured. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > limit) return true;
    for (const item of Object.values(next.value)) pending.push({ value: item, depth });
  }
  return false;
}
