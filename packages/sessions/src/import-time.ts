import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";

/** The first and last instants `importMessage` keeps: the years 1 to 9999, as ISO text writes four digits. */
const earliest = Date.parse("0001-01-01T00:00:00.000Z");
const latest = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * An imported message's time as ISO text (`2026-03-08T07:30:00.000Z`), or `INVALID_INPUT` naming it:
 * anything that is not a time, and a time outside the years 1 to 9999. JavaScript's dates reach year
 * 275760 and back before year 1, written with six digits and a sign; Postgres reads neither (it threw its
 * own error while the other stores kept the text), and such text does not sort as time beside the rest.
 */
export function importTime(value: unknown, operation: string): string {
  const date =
    value instanceof Date
      ? value
      : typeof value === "string" || typeof value === "number"
        ? new Date(value)
        : null;
  const time = date === null ? Number.NaN : date.getTime();
  if (Number.isNaN(time)) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: createdAt must be a Date, ISO text or epoch milliseconds, got ${describeValue(value)}`,
    );
  }
  if (time < earliest || time > latest) {
    throw new ContextError(
      "INVALID_INPUT",
      `${operation}: createdAt must fall in the years 1 to 9999, got ${describeValue(value)} (${(date as Date).toISOString()})`,
    );
  }
  return (date as Date).toISOString();
}
