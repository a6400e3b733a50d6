/** A timestamp as ISO text (drivers return a `Date`; a string is kept). */
export function timeText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "string") return value;
  return new Date().toISOString();
}
