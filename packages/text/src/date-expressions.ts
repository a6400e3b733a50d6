import { tokenize } from "./tokenize.js";

/**
 * When a question asks when, the turn that answers it usually says when in its own words ("yesterday", "last
 * week", "two weekends ago"), whether or not its message carries a time. Every session store reads these two
 * checks from here, so each backend favours the same turns: the SQL stores match `datePatterns` with `LIKE`
 * (`ILIKE` on Postgres) against `" " || text`, the memory store with `mentionsDate`.
 */

/**
 * The expressions that say when, each a `LIKE` pattern on the text with a space before it: a word starts after
 * a space (or at the text's start), so "ago" is not found in "Chicago", while "week" finds "weekend" and
 * "weeks". Month names leave out "may" (a verb more often than a month). Lower case: `LIKE` and `ILIKE` compare
 * these letters without case.
 */
export const datePatterns: readonly string[] = Object.freeze(
  [
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "ago",
    "last night",
    "week",
    "month",
    "year",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
  ].map((words) => `% ${words}%`),
);

const expressions = datePatterns.map((pattern) => ` ${pattern.slice(2, -1)}`);

/** Whether a text says when, as the SQL stores' `LIKE` over `datePatterns` decides it. */
export function mentionsDate(text: string): boolean {
  const spaced = ` ${text.toLowerCase()}`;
  return expressions.some((expression) => spaced.includes(expression));
}

/** Words after "what" or "which" that ask for a time ("what year", "which month"). */
const timeNouns = new Set(["year", "month", "day", "date", "time", "week", "weekend"]);

/**
 * Whether a question asks when: "when", "how long", "what year" and the like. Read from its words (stopwords
 * included), so it is the same on every backend.
 */
export function asksWhen(question: string): boolean {
  const words = tokenize(question, 512).map((token) => token.folded);
  for (let index = 0; index < words.length; index++) {
    const word = words[index];
    const next = words[index + 1];
    if (word === "when") return true;
    if (word === "how" && next === "long") return true;
    if ((word === "what" || word === "which") && next !== undefined && timeNouns.has(next)) return true;
  }
  return false;
}
