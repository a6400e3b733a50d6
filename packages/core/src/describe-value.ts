/**
 * A short account of a value for error messages, the one every package uses: `"abc"` (cut at 40 characters),
 * `""`, `null`, `undefined`, `an array`, `an object`, `a function`, `number 42`, `boolean true`.
 */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

/**
 * `text` as an error message quotes it: whole up to `maximum` characters, else its start and "…". A name a
 * model made up (a 1 MB label or key) comes back to it in a tool's answer; read back whole, it would fill
 * the model's context with its own mistake.
 */
export function clipped(text: string, maximum = 80): string {
  if (text.length <= maximum) return text;
  // Never end inside a surrogate pair: the message must stay well-formed text.
  const end = (text.charCodeAt(maximum - 1) & 0xfc00) === 0xd800 ? maximum - 1 : maximum;
  return `${text.slice(0, end)}…`;
}

/**
 * What a thrown value says, for an error message: an `Error`'s message, else its string form, else its
 * `describeValue` (a null-prototype object, or one whose `toString` throws, has no string form).
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return describeValue(error);
  }
}
