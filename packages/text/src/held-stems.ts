import { porterStem } from "./porter.js";
import { isStopword } from "./stopwords.js";
import { foldToken, tokenCharacter } from "./tokenize.js";

/**
 * Which of `stems` the text holds as words other than stopwords: the same answer as stemming every token of
 * `tokenize(text)`, for a fraction of the work. A search re-ranks its candidates by the query terms each one
 * holds, which asks this of every candidate on every call, and the query's few stems start with few letters.
 * Porter rewrites only a word's ending and leaves words under three bytes alone, so a stem keeps its word's
 * first letter: a word whose ASCII first letter starts no stem is skipped before it is cut out of the text.
 * Words are found by walking the text's characters as `tokenRun` cuts them (ASCII without a regular
 * expression), and the stems of the words met lately are remembered. With `maximumCharacters`, only the words
 * that end within that many characters (UTF-16 units) are read.
 */
export function heldStems(
  text: string,
  stems: ReadonlySet<string>,
  maximumCharacters = Number.POSITIVE_INFINITY,
): Set<string> {
  const held = new Set<string>();
  if (stems.size === 0) return held;
  // The ASCII codes a wanted stem may start with, either case (a word's ASCII first letter folds to lower case).
  const asciiFirsts = new Uint8Array(128);
  for (const stem of stems) {
    if (stem.length === 0) continue;
    const code = stem.charCodeAt(0);
    if (code < 0x80) {
      asciiFirsts[code] = 1;
      if (code >= 0x61 && code <= 0x7a) asciiFirsts[code - 0x20] = 1;
    }
  }
  let wordStart = -1;
  for (let index = 0; index <= text.length; ) {
    let size = 1;
    let inWord = false;
    if (index < text.length) {
      const code = text.charCodeAt(index);
      if (code < 0x80) inWord = asciiWordCharacters[code] === 1;
      else {
        const point = text.codePointAt(index) as number;
        if (point > 0xffff) size = 2;
        inWord = isWordCharacter(point);
      }
    }
    if (inWord) {
      // A word that runs past the characters read is not read at all: its cut start could be another word.
      if (index + size > maximumCharacters) break;
      if (wordStart < 0) wordStart = index;
    } else if (wordStart >= 0) {
      const first = text.charCodeAt(wordStart);
      // An ASCII first letter folds to its lower case; anything else (diacritics, other scripts, a leading
      // combining mark) is folded in full before it is judged.
      if (first >= 0x80 || asciiFirsts[first] === 1) {
        const stem = stemOfWord(text.slice(wordStart, index));
        if (stem !== null && stems.has(stem)) held.add(stem);
      }
      wordStart = -1;
    }
    if (!inWord && index >= maximumCharacters) break;
    index += size;
  }
  return held;
}

/**
 * The index stem of a word as it stands in a text (`null` for a stopword or a word that folds to nothing),
 * remembered for the words met lately: a conversation's candidates repeat their words from search to search,
 * and stemming is most of what a look costs.
 */
const stemsOfWords = new Map<string, string | null>();
const rememberedWords = 8_192;
/** Longer words are stemmed each time: a stored text may hold one run of letters 100 kB long. */
const longestRememberedWord = 64;

function stemOfWord(word: string): string | null {
  let stem = stemsOfWords.get(word);
  if (stem !== undefined) return stem;
  const folded = foldToken(word);
  stem = folded.length === 0 || isStopword(folded) ? null : porterStem(folded);
  if (word.length > longestRememberedWord) return stem;
  if (stemsOfWords.size >= rememberedWords) stemsOfWords.clear();
  stemsOfWords.set(word, stem);
  return stem;
}

/** `tokenCharacter` of each ASCII character (letters and digits), asked once. */
const asciiWordCharacters = new Uint8Array(128).map((_, code) =>
  tokenCharacter.test(String.fromCharCode(code)) ? 1 : 0,
);
/** Answers of `tokenCharacter` for the non-ASCII code points met so far (texts repeat few of them). */
const nonAsciiWordCharacters = new Map<number, boolean>();

function isWordCharacter(point: number): boolean {
  let answer = nonAsciiWordCharacters.get(point);
  if (answer === undefined) {
    answer = tokenCharacter.test(String.fromCodePoint(point));
    if (nonAsciiWordCharacters.size < 4_096) nonAsciiWordCharacters.set(point, answer);
  }
  return answer;
}
