import { tokenize } from "./tokenize.js";

/**
 * The fields a conversation search indexes beside a message's own text (BM25F-style: each its own column,
 * weighed on its own): who spoke it and on which day. Both SQLite's and Postgres' session stores read them
 * from here, so the two backends index the same words.
 */
export interface MessageFields {
  /**
   * The speaker, as one folded word: `metadata.speaker` or `metadata.name` when the message carries one, else
   * the label of a text that starts "Name: …" (one to three words before a colon, as a transcript or a group
   * chat writes it), else the role. A query that names the speaker ranks that speaker's turns higher.
   */
  readonly speaker: string;
  /** The day the message was written, as words ("8 May 2023", UTC), or `null` when it carries no time. */
  readonly time: string | null;
}

/** The shape `messageFieldsOf` reads: an AI SDK `UIMessage` and a session message both fit. */
export interface MessageFieldSource {
  readonly role: string;
  readonly metadata?: unknown;
  readonly createdAt?: unknown;
}

/** The English month names, January first: the words `dayWords` writes (SQLite's day expression reads them too). */
export const monthNames = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;

/** A label is looked for in this many leading characters only. */
const labelWindow = 48;
/** A label has at most this many words. */
const labelWords = 3;

export function messageFieldsOf(message: MessageFieldSource, text: string): MessageFields {
  return { speaker: speakerOf(message, text), time: dayWords(message.createdAt) };
}

function speakerOf(message: MessageFieldSource, text: string): string {
  const metadata = message.metadata;
  if (typeof metadata === "object" && metadata !== null) {
    for (const key of ["speaker", "name"] as const) {
      const value = (metadata as Record<string, unknown>)[key];
      if (typeof value === "string") {
        const first = tokenize(value, labelWindow)[0];
        if (first !== undefined) return first.folded;
      }
    }
  }
  const colon = text.slice(0, labelWindow).indexOf(":");
  if (colon > 0) {
    const label = text.slice(0, colon);
    const words = tokenize(label);
    // Only words and single spaces or dots between them: "Caroline", "Dr. Mary Ann"; never "see http" or "Note 1".
    const letters = label.replace(/[\s.'’-]/gu, "");
    if (
      words.length >= 1 &&
      words.length <= labelWords &&
      /^\p{L}+$/u.test(letters) &&
      !/\s\s/u.test(label) &&
      /^\p{Lu}/u.test(label.trimStart())
    ) {
      const first = words[0];
      if (first !== undefined) return first.folded;
    }
  }
  return tokenize(message.role, labelWindow)[0]?.folded ?? "";
}

/** "8 May 2023" (UTC) for a `Date` or a date string; `null` for anything else or an invalid date. */
export function dayWords(value: unknown): string | null {
  if (!(value instanceof Date) && typeof value !== "string") return null;
  const date = value instanceof Date ? value : new Date(value);
  const time = date.getTime();
  if (!Number.isFinite(time)) return null;
  return `${date.getUTCDate()} ${monthNames[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}
