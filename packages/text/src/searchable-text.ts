import { compatibleWord, holdsCompatibilityForm } from "./compatibility-forms.js";
import { tokenRun } from "./tokenize.js";

/**
 * The text an FTS5 index row holds for a text that is also the text handed back (SQLite's session search row,
 * `Fts5SearchProvider`'s entry): FTS5's `unicode61` cannot be taught the rule of compatibility-forms.ts, so the
 * row holds the text as written and, after it, the words the rule reads otherwise, in the form it reads them:
 * "ﬁnance, ti\u00adde" is stored as "ﬁnance, ti\u00adde\n\u2060 finance tide", which FTS5 indexes as "finance"
 * and "tide" too. Text without such words (ASCII, accented Latin, CJK in its normal form) is stored as it is.
 * `writtenText` takes the words off again, so the text handed back is the text as written, byte for byte.
 */

/**
 * What separates the text from its words: a line break, a word joiner (which no word the rule reads holds) and a
 * space (Postgres' parser, under locale C, takes any character outside ASCII for a letter: without the space it
 * would read the joiner and the first word as one).
 */
const wordsMark = "\n\u2060 ";

/** The words of `text` the rule reads otherwise than as written, in that form, each once, joined by spaces. */
function compatibleWordsOf(text: string): string {
  if (!holdsCompatibilityForm(text)) return "";
  const words = new Set<string>();
  for (const match of text.matchAll(tokenRun)) {
    const word = compatibleWord(match[0]);
    if (word !== match[0] && word.length > 0) words.add(word);
  }
  return [...words].join(" ");
}

/** The row text of `text`: the text, then its compatible words when it has any. */
export function searchableText(text: string): string {
  const words = compatibleWordsOf(text);
  return words.length === 0 ? text : `${text}${wordsMark}${words}`;
}

/**
 * The text as written of a row text `searchableText` made (or of a row an earlier release wrote, which is the
 * text itself): the words after the mark are taken off only when they are the text's own compatible words, so
 * a text that happens to hold the mark is handed back whole.
 */
export function writtenText(stored: string): string {
  const mark = stored.lastIndexOf(wordsMark);
  if (mark < 0) return stored;
  const text = stored.slice(0, mark);
  const words = stored.slice(mark + wordsMark.length);
  return words.length > 0 && compatibleWordsOf(text) === words ? text : stored;
}
