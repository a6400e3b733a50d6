import { compatibleWord, ignorableCharacters } from "./compatibility-forms.js";
import { porterStem } from "./porter.js";

/**
 * Query-side tokenization that mirrors FTS5's `unicode61` tokenizer (default options, which the index uses
 * under `porter`): a token is a run of letters, digits and private-use characters (Unicode categories L*,
 * N*, Co); everything else separates tokens. Tokens are case-folded and lose their Latin diacritics
 * (`remove_diacritics=1`). Combining diacritical marks (U+0300 to U+036F) belong to the token they follow
 * and are dropped by the fold, as in `unicode61`. Unlike `unicode61`, a word is read through one rule for
 * text in another Unicode form (compatibility-forms.ts): a soft hyphen or zero-width character inside it is
 * dropped rather than cutting it, and "ｔｉｄｅ" or "ﬁnance" read as "tide" and "finance"; the backends index
 * such text in that form too.
 *
 * Whatever this produces is only ever sent to FTS5 inside a quoted string, where FTS5 tokenizes it again
 * itself; so a small difference from `unicode61` can cost recall on an exotic script, never safety.
 * The Node tests compare this file and porter.ts with the real tokenizer through `fts5vocab`.
 */

/** One word of a text, folded as `unicode61` folds it, with the index term the `porter` tokenizer makes. */
export interface Token {
  /** Case-folded, diacritics removed: what `unicode61` would emit. */
  readonly folded: string;
  /** What the `porter` tokenizer stores in the index for this word. */
  readonly stem: string;
}

/** A word of a query: a `Token`, and the word as written, which only a query's plan needs. */
export interface QueryToken extends Token {
  /**
   * With its diacritics (NFC), ASCII letters lower-cased and any other letter's case kept: Postgres' `english`
   * configuration keeps diacritics ("café" is 'café' there, never 'cafe'), and lower-cases a word as the
   * database's locale says, which under `C` is ASCII letters alone ("ЙОГА" is 'ЙОГА' there), so Postgres is
   * left to lower-case the rest as it did the text it indexed.
   */
  readonly written: string;
}

/**
 * One character a token holds: a letter, digit or private-use character, a combining diacritic, or a combining
 * kana voiced or semi-voiced mark (U+3099, U+309A: how a decomposed, NFD, text writes "が" as "か" and a mark).
 * `unicode61` cuts a word at those marks; here they stay in the word and compose with its kana when it is folded,
 * so a word reads the same in either Unicode form (a search asks FTS5 for its decomposed form too:
 * `QueryTerm.decomposed`). A default-ignorable character (a soft hyphen, a zero-width space or joiner) belongs
 * to a word too, and is dropped when the word is folded (compatibility-forms.ts).
 */
const tokenCharacterSource = `[\\p{L}\\p{N}\\p{Co}]|[\\u0300-\\u036f\\u3099\\u309a${ignorableCharacters}]`;
/** A run of token characters, as `unicode61` cuts text. */
export const tokenRun = new RegExp(`(?:${tokenCharacterSource})+`, "gu");
/** Whether a text of one character is a token character (held-stems.ts walks the runs by hand). */
export const tokenCharacter = new RegExp(`^(?:${tokenCharacterSource})$`, "u");
/** A Latin letter followed by combining diacritics (after NFD): `unicode61` keeps the letter, drops the marks. */
const latinWithDiacritics = /([\p{Script=Latin}])[\u0300-\u036f]+/gu;
/** Marks that follow no letter (a lone mark at a token's start): nothing to compose with, dropped. */
const leadingDiacritics = /^[\u0300-\u036f\u3099\u309a]+/u;

/** Text of ASCII characters only. */
const ascii = /^[\x00-\x7f]*$/;

/**
 * Fold one token the way `unicode61` does with `remove_diacritics=1`, after reading it in its compatibility form
 * (`compatibleWord`: "ｔｉ\u00adｄｅ" is "tide").
 */
export function foldToken(word: string): string {
  const lower = word.toLowerCase();
  // ASCII is already folded; skip the normalisation work for the common case.
  if (ascii.test(lower)) return lower;
  // Only Latin letters lose their diacritics (Cyrillic й or ё keep theirs), as in `unicode61`. A compatibility
  // form may be a capital ("ℌ" is "H"): lower-cased again.
  const compatible = compatibleWord(lower);
  return (compatible === lower ? lower : compatible.toLowerCase())
    .normalize("NFD")
    .replace(latinWithDiacritics, "$1")
    .replace(leadingDiacritics, "")
    .normalize("NFC");
}

/** Split text into folded words, in order, with their index stems. */
export function tokenize(text: string, maximumCharacters = Number.POSITIVE_INFINITY): Token[] {
  return wordsOf(text, maximumCharacters, (_, folded) => ({ folded, stem: porterStem(folded) }));
}

/** `tokenize` for a query: each word also as written (`QueryToken`), for a search of Postgres. */
export function queryTokens(text: string, maximumCharacters: number): QueryToken[] {
  return wordsOf(text, maximumCharacters, (word, folded) => ({
    folded,
    stem: porterStem(folded),
    // An ASCII word is written as it folds: in lower case.
    written: ascii.test(word)
      ? folded
      : word.normalize("NFC").replace(asciiCapitals, (capital) => capital.toLowerCase()),
  }));
}

const asciiCapitals = /[A-Z]/g;

/** The words of a text, cut as `unicode61` cuts it, each made into `T` from the word and its fold. */
function wordsOf<T>(text: string, maximumCharacters: number, make: (word: string, folded: string) => T): T[] {
  const source = text.length > maximumCharacters ? text.slice(0, maximumCharacters) : text;
  const words: T[] = [];
  for (const match of source.matchAll(tokenRun)) {
    const folded = foldToken(match[0]);
    if (folded.length > 0) words.push(make(match[0], folded));
  }
  return words;
}
