import { porterStem } from "./porter.js";
import { isStopword } from "./stopwords.js";
import { foldToken, tokenRun } from "./tokenize.js";

/**
 * Which of `stems` the text holds as words other than stopwords: the same answer as stemming every token of
 * `tokenize(text)`, for a fraction of the work. A search re-ranks its candidates by the query terms each one
 * holds, which asks this of every candidate on every call, and the query's few stems start with few letters.
 * Porter rewrites only a word's ending and leaves words under three bytes alone, so a stem keeps its word's
 * first letter: a word whose folded first letter starts no stem is skipped before it is cut out, folded or
 * stemmed. The words are found by a scan of character codes (`tokenRun`'s runs), not the expression, which
 * makes a match object of every word.
 */
export function heldStems(text: string, stems: ReadonlySet<string>): Set<string> {
  const held = new Set<string>();
  if (stems.size === 0) return held;
  const firstLetters = new Set<string>();
  // The same, by ASCII code, lower and upper case: most words are judged by their first code alone.
  const asciiFirstLetters = new Uint8Array(0x80);
  for (const stem of stems) {
    if (stem.length === 0) continue;
    firstLetters.add(stem[0] as string);
    const code = stem.charCodeAt(0);
    if (code < 0x80) asciiFirstLetters[code] = 1;
    if (code >= 0x61 && code <= 0x7a) asciiFirstLetters[code - 0x20] = 1;
  }
  const length = text.length;
  let index = 0;
  while (index < length) {
    const start = index;
    const first = text.charCodeAt(index);
    index = runEnd(text, index);
    if (index === start) {
      // Not a token character: one code point on.
      index += first >= 0xd800 && first <= 0xdbff && isTrailSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
      continue;
    }
    // An ASCII first letter folds to its lower case; anything else (diacritics, other scripts, a leading
    // combining mark) is folded in full before it is judged.
    if (first < 0x80 && asciiFirstLetters[first] === 0) continue;
    const folded = foldToken(text.slice(start, index));
    if (folded.length === 0 || !firstLetters.has(folded[0] as string) || isStopword(folded)) continue;
    const stem = porterStem(folded);
    if (stems.has(stem)) held.add(stem);
  }
  return held;
}

/** Where the run of token characters starting at `index` ends (`index` itself when none starts there). */
function runEnd(text: string, index: number): number {
  const length = text.length;
  let end = index;
  while (end < length) {
    const code = text.charCodeAt(end);
    if (code < 0x80) {
      if (!asciiTokenCharacters[code]) return end;
      end++;
      continue;
    }
    const point = text.codePointAt(end) as number;
    if (!isTokenCharacter(point)) return end;
    end += point > 0xffff ? 2 : 1;
  }
  return end;
}

function isTrailSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** One token character, as `tokenRun` (tokenize.ts) counts them. */
const tokenCharacter = new RegExp(`^${tokenRun.source.replace(/\+$/, "")}$`, "u");

/** ASCII codes that are token characters (letters and digits). */
const asciiTokenCharacters = Array.from({ length: 0x80 }, (_, code) =>
  tokenCharacter.test(String.fromCharCode(code)),
);

/** Whether a code point above ASCII is a token character, remembered for the code points met. */
function isTokenCharacter(point: number): boolean {
  let known = tokenCharacters.get(point);
  if (known === undefined) {
    known = tokenCharacter.test(String.fromCodePoint(point));
    if (tokenCharacters.size >= 4_096) tokenCharacters.clear();
    tokenCharacters.set(point, known);
  }
  return known;
}

const tokenCharacters = new Map<number, boolean>();
