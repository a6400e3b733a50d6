import { secureJsonParse } from "@ai-sdk/provider-utils";
import { type FlexibleSchema, type JSONSchema7, jsonSchema } from "ai";

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

/** The `{}` each input nested too deeply became, so `execute` can say why it got nothing. */
const replacedInputs = new WeakSet<object>();

/**
 * A tool's input schema for the AI SDK: the JSON Schema the model sees, with a validator that accepts every
 * input (the tool checks it and answers what is wrong) except one nested deeper than `maximumToolInputDepth`,
 * which it replaces by `{}`. The SDK keeps the validated input in the step's messages and deep-copies them
 * with `structuredClone`, which runs out of stack a few thousand levels down: a model's `[[[[…]]]]` threw a
 * `RangeError` out of `generateText` whichever tool it called. `isReplacedToolInput` tells the tool.
 */
export function toolInputSchema<Input>(schema: JSONSchema7): FlexibleSchema<Input> {
  return jsonSchema<Input>(schema, {
    validate: (value) => {
      if (!nestsDeeperThan(value, maximumToolInputDepth)) return { success: true, value: value as Input };
      const replaced = {};
      replacedInputs.add(replaced);
      return { success: true, value: replaced as Input };
    },
  });
}

/** Whether `input` is the `{}` `toolInputSchema` put in place of arguments nested too deeply. */
export function isReplacedToolInput(input: unknown): boolean {
  return typeof input === "object" && input !== null && replacedInputs.has(input);
}

/** What a tool answers for arguments `toolInputSchema` replaced. */
export function replacedToolInputMessage(tool: string): string {
  return `Error: ${tool}: the arguments nest arrays or objects deeper than ${maximumToolInputDepth} levels; send one flat object of the fields the tool lists`;
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
