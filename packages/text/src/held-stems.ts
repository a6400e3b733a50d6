import { porterStem } from "./porter.js";
import { isStopword } from "./stopwords.js";
import { foldToken, tokenCharacter } from "./tokenize.js";

/**
 * Which of `stems` the text holds as words other than stopwords: the same answer as stemming every token of
 * `tokenize(text)`, for a fraction of the work. A search re-ranks its candidates by the query terms each one
 * holds, which asks this of every candidate on every call, and the query's few stems start with few letters.
 * Porter rewrites only a word's ending and leaves words under three bytes alone: a stem is its folded word's
 * first characters followed by at most two others (`stemLeadOf`), so a word is cut out of the text and
 * stemmed only when it could hold a wanted stem: its ASCII first letter starts one, and, when the word is all
 * ASCII (it folds to its lower case), it starts with that stem's lead. Words are found by walking the text's
 * characters as `tokenRun` cuts them (ASCII without a regular expression), and the stems of the words met
 * lately are remembered. With `maximumCharacters`, only the words that end within that many characters
 * (UTF-16 units) are read.
 */
export function heldStems(
  text: string,
  stems: ReadonlySet<string>,
  maximumCharacters = Number.POSITIVE_INFINITY,
): Set<string> {
  const held = new Set<string>();
  if (stems.size === 0) return held;
  const leads = leadsOf(stems);
  const length = text.length;
  let index = 0;
  while (index < length && index < maximumCharacters) {
    let code = text.charCodeAt(index);
    let size = 1;
    let asciiWord = code < 0x80;
    if (asciiWord) {
      if (asciiWordCharacters[code] !== 1) {
        index++;
        continue;
      }
    } else {
      const point = text.codePointAt(index) as number;
      if (point > 0xffff) size = 2;
      if (!isWordCharacter(point)) {
        index += size;
        continue;
      }
    }
    // A word starts here: find its end. A word that runs past the characters read is not read at all (its cut
    // start could be another word), and neither is anything after it.
    const start = index;
    for (;;) {
      if (index + size > maximumCharacters) return held;
      index += size;
      if (index >= length) break;
      code = text.charCodeAt(index);
      if (code < 0x80) {
        if (asciiWordCharacters[code] !== 1) break;
        size = 1;
      } else {
        const point = text.codePointAt(index) as number;
        size = point > 0xffff ? 2 : 1;
        if (!isWordCharacter(point)) break;
        asciiWord = false;
      }
    }
    const first = text.charCodeAt(start);
    // A first letter outside ASCII (diacritics, other scripts, a leading combining mark) is folded in full
    // before it is judged; an ASCII one folds to its lower case, and so does an all-ASCII word.
    const wanted = first < 0x80 ? leads[first] : undefined;
    if (
      first >= 0x80 ||
      (wanted !== undefined && (!asciiWord || startsWithLead(text, start, index, wanted)))
    ) {
      const stem = stemOfWord(text.slice(start, index));
      if (stem !== null && stems.has(stem)) held.add(stem);
    }
  }
  return held;
}

/**
 * The first characters of a stem that every word holding it starts with (folded): all but its last two. Porter
 * only ever replaces a word's ending, and what it writes in place of a suffix differs from the suffix in at
 * most its last two characters ("biliti" becomes "ble", "ational" "ate", "y" "i", "at" "ate"); its later steps
 * only remove. The tests check this on every word of up to five letters of a dozen and on suffix chains.
 */
export function stemLeadOf(stem: string): string {
  return stem.slice(0, Math.max(1, stem.length - 2));
}

/**
 * By ASCII code (either case of a letter), the leads (`stemLeadOf`) of the wanted stems starting with it.
 * Kept for the last set asked about while it holds the same stems: a search asks of each of its candidates.
 */
let knownStems: readonly string[] = [];
let knownLeads: (readonly string[] | undefined)[] = new Array(128).fill(undefined);

function leadsOf(stems: ReadonlySet<string>): (readonly string[] | undefined)[] {
  if (knownStems.length === stems.size) {
    let index = 0;
    while (index < knownStems.length && stems.has(knownStems[index] as string)) index++;
    if (index === knownStems.length) return knownLeads;
  }
  const leads: (string[] | undefined)[] = new Array(128).fill(undefined);
  for (const stem of stems) {
    if (stem.length === 0) continue;
    const code = stem.charCodeAt(0);
    if (code >= 0x80) continue;
    const lead = stemLeadOf(stem);
    for (const key of code >= 0x61 && code <= 0x7a ? [code, code - 0x20] : [code]) {
      leads[key] = [...(leads[key] ?? []), lead];
    }
  }
  knownStems = [...stems];
  knownLeads = leads;
  return leads;
}

/** Whether the ASCII word `text[start, end)` in lower case starts with one of `leads`. */
function startsWithLead(text: string, start: number, end: number, leads: readonly string[]): boolean {
  for (const lead of leads) {
    if (lead.length > end - start) continue;
    let index = 0;
    for (; index < lead.length; index++) {
      const code = text.charCodeAt(start + index);
      if ((code >= 0x41 && code <= 0x5a ? code + 0x20 : code) !== lead.charCodeAt(index)) break;
    }
    if (index === lead.length) return true;
  }
  return false;
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
