/** Whether a method's return value is a promise (provider methods are async). */
export function isPromiseLike(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"
  );
}

/** The whole numbers a summary states (`"1,024 entries"` → `[1024]`). */
export function numbersIn(text: string): number[] {
  return (text.match(/\d[\d,_]*/g) ?? []).map((digits) => Number(digits.replace(/[,_]/g, "")));
}
