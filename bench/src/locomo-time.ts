/** LoCoMo's session time ("1:56 pm on 8 May, 2023", `session_N_date_time`) as a `Date` (UTC), or undefined. */
export function locomoSessionTime(value: unknown): Date | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d{1,2}):(\d{2}) ([ap])m on (\d{1,2}) (\p{L}+),? (\d{4})$/u.exec(value.trim());
  if (match === null) return undefined;
  const [, hour, minute, half, day, month, year] = match;
  const date = new Date(`${month} ${day}, ${year} UTC`);
  if (Number.isNaN(date.getTime())) return undefined;
  date.setUTCHours((Number(hour) % 12) + (half === "p" ? 12 : 0), Number(minute));
  return date;
}
