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
