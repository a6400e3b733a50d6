/** Counts the tokens of a text. Pluggable through the `tokenCounter` option. */
export type TokenCounter = (text: string) => number;

// Scripts whose characters a BPE vocabulary spends about a token on each (CJK, kana, hangul).
const DENSE_SCRIPT =
  /[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3200-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/u;
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;
const SPACE = /\s/u;

const Kind = { Letter: 0, Digit: 1, Space: 2, Symbol: 3 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

/** The character class of one code point; ASCII without a regular expression, as it is most text. */
function kindOf(code: number, character: string): Kind {
  if (code < 128) {
    if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90)) return Kind.Letter;
    if (code >= 48 && code <= 57) return Kind.Digit;
    if (code === 32 || (code >= 9 && code <= 13)) return Kind.Space;
    return Kind.Symbol;
  }
  if (LETTER.test(character)) return Kind.Letter;
  if (DIGIT.test(character)) return Kind.Digit;
  if (SPACE.test(character)) return Kind.Space;
  return Kind.Symbol;
}

/**
 * The default estimate: a cheap walk over letter runs, digit runs, whitespace and symbol runs, shaped like a
 * BPE tokenizer's output. Measured against gpt-tokenizer (o200k and cl100k) by `bench/src/tokens.ts`: about
 * 10% high on English prose (so a `maxTokens` limit is not passed unnoticed), 10–15% high on code and JSON
 * (at most 2% low on any sample, where characters / 4 is up to a third low), and about one token per CJK
 * character (near cl100k, high against o200k). Never 0 for non-empty text.
 */
export function estimateTokens(text: string): number {
  const length = text.length;
  if (length === 0) return 0;
  let tokens = 0;
  // One pass over maximal runs of letters, digits, whitespace or symbols. A run's tokens are added when the
  // next run starts (`runTokens`); the state lives in locals, not a closure, as this runs on every read.
  let kind = -1;
  let units = 0; // UTF-16 length of the run
  let points = 0; // code points in the run
  let dense = 0; // CJK-like letters in a letter run
  let astral = 0; // code points above U+FFFF in a symbol run
  let single = false; // the run is exactly one space
  for (let index = 0; index < length; ) {
    // Code point by code point without the string iterator; ASCII without a regular expression.
    let code = text.charCodeAt(index);
    let width = 1;
    let next: Kind;
    let isDense = false;
    if (code < 128) {
      next = ASCII_KINDS[code] as Kind;
    } else {
      if (code >= 0xd800 && code <= 0xdbff && index + 1 < length) {
        const low = text.charCodeAt(index + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          code = (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
          width = 2;
        }
      }
      const character = text.slice(index, index + width);
      next = kindOf(code, character);
      isDense = next === Kind.Letter && code >= 0x1100 && DENSE_SCRIPT.test(character);
    }
    if (next !== kind) {
      tokens += runTokens(kind, units, points, dense, astral, single);
      kind = next;
      units = 0;
      points = 0;
      dense = 0;
      astral = 0;
      single = code === 32;
    } else {
      single = false;
    }
    if (isDense) dense += 1;
    if (next === Kind.Symbol && code > 0xffff) astral += 1;
    units += width;
    points += 1;
    index += width;
  }
  tokens += runTokens(kind, units, points, dense, astral, single);
  return Math.max(1, tokens);
}

/** The kind of each ASCII code unit. */
const ASCII_KINDS: readonly Kind[] = Array.from({ length: 128 }, (_, code) => kindOf(code, ""));

/** The tokens of one finished run (see `estimateTokens`); 0 before the first run. */
function runTokens(
  kind: number,
  units: number,
  points: number,
  dense: number,
  astral: number,
  single: boolean,
): number {
  if (kind === Kind.Letter) {
    const other = points - dense;
    // Common words are one token up to about seven letters; longer ones split into pieces of about six.
    return dense + (other === 0 ? 0 : other <= 7 ? 1 : Math.ceil(other / 6));
  }
  // Digits: about three to a token.
  if (kind === Kind.Digit) return Math.ceil(units / 3);
  // A lone space joins the next word (" the" is one token); a lone newline, or any longer run, is a token.
  if (kind === Kind.Space) return single ? 0 : 1;
  // Emoji and other astral symbols take two or three tokens; ASCII punctuation pairs up (`();`, `=>`).
  if (kind === Kind.Symbol) return astral * 2 + Math.ceil((units - astral * 2) / 2);
  return 0;
}
