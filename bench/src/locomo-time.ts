import { readFileSync } from "node:fs";
import { type LocomoConversation, locomoDirectory } from "./locomo-data.js";

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

/** Each conversation's turns' times (its session's time), by conversation name, then `dia_id`. */
export type LocomoTurnTimes = ReadonlyMap<string, ReadonlyMap<string, Date>>;

/** The time of every turn of `conversations` (read from the data's `session_N_date_time`). */
export function locomoTurnTimes(conversations: readonly LocomoConversation[]): LocomoTurnTimes {
  const all = new Map<string, Map<string, Date>>();
  for (const conversation of conversations) {
    const data = JSON.parse(
      readFileSync(new URL(`${conversation.name}.json`, locomoDirectory), "utf8"),
    ) as Record<string, unknown>;
    const times = new Map<string, Date>();
    for (let session = 1; Array.isArray(data[`session_${session}`]); session++) {
      const time = locomoSessionTime(data[`session_${session}_date_time`]);
      if (time === undefined) continue;
      for (const turn of data[`session_${session}`] as { dia_id: string }[]) times.set(turn.dia_id, time);
    }
    all.set(conversation.name, times);
  }
  return all;
}
