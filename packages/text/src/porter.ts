/**
 * The Porter stemmer exactly as SQLite's FTS5 `porter` tokenizer applies it, so a search can predict
 * which index term a query word becomes (for document-frequency look-ups in `fts5vocab` and for counting
 * which query terms an entry matches) without asking the database.
 *
 * FTS5 works on the UTF-8 bytes of each token that its `unicode61` tokenizer produced: tokens shorter than
 * 3 or longer than 64 bytes pass through unchanged, only ASCII `a e i o u` (and `y` after a consonant) are
 * vowels, and in each rule step only the suffix group chosen by the token's second-to-last byte is tried,
 * first matching suffix decides. This file follows those rules on bytes; the Node tests compare it with
 * the real tokenizer on a few thousand words through `fts5vocab`.
 */

const maximumTokenBytes = 64;
const minimumTokenBytes = 3;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Condition = (word: Uint8Array, stemLength: number) => boolean;

interface Rule {
  readonly suffix: Uint8Array;
  readonly condition: Condition | null;
  readonly replacement: Uint8Array;
}

/** A step: rule groups keyed by the second-to-last byte of the word; the first suffix that matches decides. */
type Step = ReadonlyMap<number, readonly Rule[]>;

const a = 0x61;
const e = 0x65;
const i = 0x69;
const o = 0x6f;
const u = 0x75;
const y = 0x79;

function isVowel(byte: number | undefined, yIsVowel: boolean): boolean {
  return byte === a || byte === e || byte === i || byte === o || byte === u || (yIsVowel && byte === y);
}

/**
 * Skip one vowel run and then one consonant (a "VC" unit of the Porter measure) starting at `start` of
 * `word[start, end)`; return the index just after that consonant, or 0 when there is no further VC unit.
 */
function skipVowelConsonant(
  word: Uint8Array,
  start: number,
  end: number,
  previousIsConsonant: boolean,
): number {
  let consonant = previousIsConsonant;
  let index = start;
  for (; index < end; index++) {
    consonant = !isVowel(word[index], consonant);
    if (!consonant) break;
  }
  for (index++; index < end; index++) {
    consonant = !isVowel(word[index], consonant);
    if (consonant) return index + 1;
  }
  return 0;
}

/** m > 0 */
function measureAboveZero(word: Uint8Array, stemLength: number): boolean {
  return skipVowelConsonant(word, 0, stemLength, false) !== 0;
}

/** m > 1 */
function measureAboveOne(word: Uint8Array, stemLength: number): boolean {
  const next = skipVowelConsonant(word, 0, stemLength, false);
  return next !== 0 && skipVowelConsonant(word, next, stemLength, true) !== 0;
}

/** m = 1 */
function measureIsOne(word: Uint8Array, stemLength: number): boolean {
  const next = skipVowelConsonant(word, 0, stemLength, false);
  return next !== 0 && skipVowelConsonant(word, next, stemLength, true) === 0;
}

/** *o: the stem ends consonant-vowel-consonant, the last consonant not w, x or y. */
function endsConsonantVowelConsonant(word: Uint8Array, stemLength: number): boolean {
  const last = word[stemLength - 1];
  if (last === 0x77 || last === 0x78 || last === y) return false;
  let mask = 0;
  let consonant = false;
  for (let index = 0; index < stemLength; index++) {
    consonant = !isVowel(word[index], consonant);
    mask = ((mask << 1) + (consonant ? 1 : 0)) & 0xff;
  }
  return (mask & 0b111) === 0b101;
}

/** m > 1 and the stem ends in s or t. */
function measureAboveOneEndingSOrT(word: Uint8Array, stemLength: number): boolean {
  const last = word[stemLength - 1];
  return (last === 0x73 || last === 0x74) && measureAboveOne(word, stemLength);
}

/** *v*: the stem contains a vowel. */
function containsVowel(word: Uint8Array, stemLength: number): boolean {
  for (let index = 0; index < stemLength; index++) {
    if (isVowel(word[index], index > 0)) return true;
  }
  return false;
}

function step(
  rules: ReadonlyArray<readonly [suffix: string, condition: Condition | null, replacement: string]>,
): Step {
  const groups = new Map<number, Rule[]>();
  for (const [suffix, condition, replacement] of rules) {
    const key = suffix.charCodeAt(suffix.length - 2);
    const group = groups.get(key) ?? [];
    group.push({ suffix: encoder.encode(suffix), condition, replacement: encoder.encode(replacement) });
    groups.set(key, group);
  }
  return groups;
}

const step1b = step([
  ["eed", measureAboveZero, "ee"],
  ["ed", containsVowel, ""],
  ["ing", containsVowel, ""],
]);

const step1bRepair = step([
  ["at", null, "ate"],
  ["bl", null, "ble"],
  ["iz", null, "ize"],
]);

const step2 = step([
  ["ational", measureAboveZero, "ate"],
  ["tional", measureAboveZero, "tion"],
  ["enci", measureAboveZero, "ence"],
  ["anci", measureAboveZero, "ance"],
  ["izer", measureAboveZero, "ize"],
  ["logi", measureAboveZero, "log"],
  ["bli", measureAboveZero, "ble"],
  ["alli", measureAboveZero, "al"],
  ["entli", measureAboveZero, "ent"],
  ["eli", measureAboveZero, "e"],
  ["ousli", measureAboveZero, "ous"],
  ["ization", measureAboveZero, "ize"],
  ["ation", measureAboveZero, "ate"],
  ["ator", measureAboveZero, "ate"],
  ["alism", measureAboveZero, "al"],
  ["iveness", measureAboveZero, "ive"],
  ["fulness", measureAboveZero, "ful"],
  ["ousness", measureAboveZero, "ous"],
  ["aliti", measureAboveZero, "al"],
  ["iviti", measureAboveZero, "ive"],
  ["biliti", measureAboveZero, "ble"],
]);

const step3 = step([
  ["ical", measureAboveZero, "ic"],
  ["ness", measureAboveZero, ""],
  ["icate", measureAboveZero, "ic"],
  ["iciti", measureAboveZero, "ic"],
  ["ful", measureAboveZero, ""],
  ["ative", measureAboveZero, ""],
  ["alize", measureAboveZero, "al"],
]);

const step4 = step([
  ["al", measureAboveOne, ""],
  ["ance", measureAboveOne, ""],
  ["ence", measureAboveOne, ""],
  ["er", measureAboveOne, ""],
  ["ic", measureAboveOne, ""],
  ["able", measureAboveOne, ""],
  ["ible", measureAboveOne, ""],
  ["ant", measureAboveOne, ""],
  ["ement", measureAboveOne, ""],
  ["ment", measureAboveOne, ""],
  ["ent", measureAboveOne, ""],
  ["ion", measureAboveOneEndingSOrT, ""],
  ["ou", measureAboveOne, ""],
  ["ism", measureAboveOne, ""],
  ["ate", measureAboveOne, ""],
  ["iti", measureAboveOne, ""],
  ["ous", measureAboveOne, ""],
  ["ive", measureAboveOne, ""],
  ["ize", measureAboveOne, ""],
]);

function endsWith(word: Uint8Array, length: number, suffix: Uint8Array): boolean {
  if (length <= suffix.length) return false;
  for (let index = 0; index < suffix.length; index++) {
    if (word[length - suffix.length + index] !== suffix[index]) return false;
  }
  return true;
}

/**
 * Apply one step to `word[0, length)` in place. Returns the new length and the rule that fired (its suffix
 * matched and its condition held), if any.
 */
function applyStep(rules: Step, word: Uint8Array, length: number): { length: number; fired: Rule | null } {
  const group = rules.get(word[length - 2] ?? -1);
  if (group === undefined) return { length, fired: null };
  for (const rule of group) {
    if (!endsWith(word, length, rule.suffix)) continue;
    const stemLength = length - rule.suffix.length;
    if (rule.condition !== null && !rule.condition(word, stemLength)) return { length, fired: null };
    word.set(rule.replacement, stemLength);
    return { length: stemLength + rule.replacement.length, fired: rule };
  }
  return { length, fired: null };
}

function step1a(word: Uint8Array, length: number): number {
  if (word[length - 1] !== 0x73) return length;
  if (word[length - 2] === e) {
    const sses = length > 4 && word[length - 4] === 0x73 && word[length - 3] === 0x73;
    const ies = length > 3 && word[length - 3] === i;
    return sses || ies ? length - 2 : length - 1;
  }
  return word[length - 2] === 0x73 ? length : length - 1;
}

/**
 * Stem one token the way FTS5's `porter` tokenizer does. The token must already be folded the way
 * `unicode61` folds it (see `foldToken` in tokenize.ts).
 */
export function porterStem(token: string): string {
  const known = recentStems.get(token);
  if (known !== undefined) return known;
  const stem = stemUncached(token);
  if (recentStems.size >= recentStemsLimit) recentStems.clear();
  recentStems.set(token, stem);
  return stem;
}

/** Stems of recently seen words: queries and the entries ranked for them repeat words a lot. */
const recentStems = new Map<string, string>();
const recentStemsLimit = 20_000;

function stemUncached(token: string): string {
  const bytes = encoder.encode(token);
  if (bytes.length > maximumTokenBytes || bytes.length < minimumTokenBytes) return token;
  // Room for the replacements, which are never more than one byte longer than what they replace.
  const word = new Uint8Array(bytes.length + 8);
  word.set(bytes);
  let length = step1a(word, bytes.length);

  const afterStep1b = applyStep(step1b, word, length);
  length = afterStep1b.length;
  // Only "ed" and "ing" (the rules that remove their suffix outright) lead to the repair rules; "eed" does not.
  if (afterStep1b.fired !== null && afterStep1b.fired.replacement.length === 0) {
    const repaired = applyStep(step1bRepair, word, length);
    length = repaired.length;
    if (repaired.fired === null) {
      const last = word[length - 1];
      if (
        !isVowel(last, false) &&
        last !== 0x6c &&
        last !== 0x73 &&
        last !== 0x7a &&
        last === word[length - 2]
      ) {
        length--;
      } else if (measureIsOne(word, length) && endsConsonantVowelConsonant(word, length)) {
        word[length++] = e;
      }
    }
  }

  if (word[length - 1] === y && containsVowel(word, length - 1)) word[length - 1] = i;

  length = applyStep(step2, word, length).length;
  length = applyStep(step3, word, length).length;
  length = applyStep(step4, word, length).length;

  if (word[length - 1] === e) {
    if (
      measureAboveOne(word, length - 1) ||
      (measureIsOne(word, length - 1) && !endsConsonantVowelConsonant(word, length - 1))
    ) {
      length--;
    }
  }
  if (
    length > 1 &&
    word[length - 1] === 0x6c &&
    word[length - 2] === 0x6c &&
    measureAboveOne(word, length - 1)
  ) {
    length--;
  }
  return decoder.decode(word.subarray(0, length));
}
