import { parseStoredMessage } from "@contextblocks/sessions/store-kit";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { datePatterns, messageFieldsOf, monthNames } from "@contextblocks/text";

/**
 * The search fields of a message beside its text (`messageFieldsOf`): its speaker, and its day when the
 * message itself carries a time (`createdAt` in its stored JSON). `time` is `null` when the day is the stored
 * row's `created_at`, which the statement that writes the row knows (`storedDayWords`), so an append or an
 * update writes both fields in its own statement.
 */
export interface MessageSearchFields {
  speaker: string;
  time: string | null;
}

export function searchFieldsOf(role: string, content: string, text: string): MessageSearchFields {
  const message = parseStoredMessage(content);
  const carried = message?.createdAt;
  const fields = messageFieldsOf({ role, metadata: message?.metadata, createdAt: carried }, text);
  // `messageFieldsOf` falls back to the row's time only when the message carries none (`??`), as the search's
  // catch-up reads it (message-search-index.ts).
  return {
    speaker: fields.speaker,
    time: carried === undefined || carried === null ? null : (fields.time ?? ""),
  };
}

/**
 * `dayWords` (`@contextblocks/text`: "8 May 2023", UTC) of a `timestamptz` expression, in SQL; `''` when it is
 * NULL, as the catch-up writes it. Only for years 1000 to 9999, where Postgres' and JavaScript's calendars
 * agree digit for digit: `storedDayKnown` says when it applies (otherwise the row is left to the catch-up).
 */
function storedDayWords(time: SqlStatement): SqlStatement {
  const utc = sql`(${time} AT TIME ZONE 'UTC')`;
  return sql`CASE WHEN ${time} IS NULL THEN '' ELSE extract(day FROM ${utc})::int::text || ' '
  || (${monthArray})[extract(month FROM ${utc})::int] || ' ' || extract(year FROM ${utc})::int::text END`;
}

/**
 * The `time_text` and `search_state` a write stores beside a message: `time` (the message's own day, an SQL
 * text expression, NULL when it carries none) else the day of `createdAt` (the row's `timestamptz`), state 2;
 * a stored time `storedDayWords` cannot spell is left to the catch-up (`''`, state 0).
 */
export function storedSearchDay(
  time: SqlStatement,
  createdAt: SqlStatement,
): { timeText: SqlStatement; searchState: SqlStatement } {
  const dayKnown = storedDayKnown(createdAt);
  return {
    timeText: sql`CASE WHEN ${time} IS NOT NULL THEN ${time} WHEN ${dayKnown} THEN ${storedDayWords(createdAt)} ELSE '' END`,
    searchState: sql`CASE WHEN ${time} IS NOT NULL OR ${dayKnown} THEN 2 ELSE 0 END`,
  };
}

/** Whether `storedDayWords` of the `timestamptz` expression is the day the catch-up would write. */
function storedDayKnown(time: SqlStatement): SqlStatement {
  return sql`(${time} IS NULL OR (${time} >= '1000-01-01T00:00:00Z'::timestamptz
  AND ${time} < '10000-01-01T00:00:00Z'::timestamptz))`;
}

const monthArray = raw(`ARRAY[${monthNames.map((name) => `'${name}'`).join(", ")}]`);

/**
 * Whether a text says when, as SQLite's store decides it (`LIKE` over `datePatterns` there): each pattern is
 * `% words%` on `' ' || text`, so one regular expression of the words ORed, each after a space, over the
 * lower-cased text says the same (as `ILIKE` compares, and a pattern holds lower-case letters and spaces
 * only), in one pass of the text. The generated column `says_when` holds it for every row (schema.ts), so a
 * search never runs it.
 */
export const saysWhenExpression = `lower(' ' || text_content) ~ ' (${datePatterns
  .map((pattern) => pattern.slice(2, -1))
  .join("|")})'`;
