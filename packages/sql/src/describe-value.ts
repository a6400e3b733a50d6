// sql is below core and imports nothing, so it keeps this one private copy of core's `describeValue`.
/** A short account of a value for error messages: `null`, `a string`, `a Map with keys size`, `an object with no own keys`. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value !== "object") return `a ${typeof value}`;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  const keys = Object.keys(value).slice(0, 5);
  const shape = keys.length > 0 ? ` with keys ${keys.join(", ")}` : " with no own keys";
  return `${typeof name === "string" && name !== "Object" ? `a ${name}` : "an object"}${shape}`;
}
