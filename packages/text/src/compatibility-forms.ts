/**
 * The one rule by which every search backend reads text typed or pasted in another form of the same word:
 *
 * - Default-ignorable characters inside a word are dropped: soft hyphen (U+00AD), zero-width space (U+200B),
 *   zero-width non-joiner and joiner (U+200C, U+200D), word joiner (U+2060) and the byte order mark (U+FEFF),
 *   as text pasted from web pages and word processors holds them. "ti\u00ADde" is the word "tide" (FTS5's
 *   `unicode61` alone would read "ti" and "de").
 * - A letter or digit with a Unicode compatibility form (NFKC) made of letters and digits is read as that form:
 *   full-width Latin and digits from CJK input methods ("ｔｉｄｅ", "２０２３"), ligatures ("ﬁnance"), half-width
 *   katakana ("ｶﾀｶﾅ" is "カタカナ"), superscripts and subscripts ("m²" is "m2"), styled mathematical letters
 *   ("𝐛𝐨𝐥𝐝"), circled digits, letterlike symbols ("ℌ" is "h"), Arabic presentation forms.
 *
 * Left as written, on purpose: a character whose compatibility form is more than one word ("½" is "1⁄2",
 * "ŀ" is "l·", "㈠" is "(一)"); Hangul compatibility jamo and their half-width forms ("ㅋㅋ", as Korean keyboards
 * type them: their compatibility form is conjoining jamo, which would compose with the next vowel into another
 * syllable); Thai and Lao vowel signs (ำ, ຳ) and the Armenian "և", which are ordinary spelling; symbols
 * between words (™, ℃, ㎏), which stay separators as in `unicode61`. ß stays ß. Text of none of these
 * characters (ASCII, accented Latin, CJK in its normal form) is read exactly as before.
 */

/** The default-ignorable characters dropped from a word. */
export const ignorableCharacters = "\u00ad\u200b-\u200d\u2060\ufeff";

/**
 * The letters and digits read as their compatibility form (generated: every `[\p{L}\p{N}\p{Co}]` code point
 * whose NFKC differs from its NFC and is letters and digits only, less the ones kept above; the tests check it
 * against the runtime's Unicode tables).
 */
export const compatibilityCharacters =
  "\u00aa\u00b2-\u00b3\u00b5\u00b9-\u00ba\u0132-\u0133\u0149\u017f\u01c4-\u01cc\u01f1-\u01f3\u02b0-\u02b8\u02e0-\u02e4\u03d0-\u03d6\u03f0-\u03f2\u03f4-\u03f5\u03f9\u0675-\u0678\u10fc\u1d2c-\u1d2e\u1d30-\u1d3a\u1d3c-\u1d4d\u1d4f-\u1d6a\u1d78\u1d9b-\u1dbf\u1e9a-\u1e9b\u2070-\u2071\u2074-\u2079\u207f-\u2089\u2090-\u209c\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2128\u212c-\u212d\u212f-\u2131\u2133-\u2139\u213c-\u213f\u2145-\u2149\u2160-\u217f\u2460-\u2473\u24ea\u2c7c-\u2c7d\u2d6f\u3038-\u303a\u309f\u30ff\u3192-\u3195\u3251-\u325f\u3280-\u3289\u32b1-\u32bf\ua69c-\ua69d\ua770\ua7f1-\ua7f4\ua7f8-\ua7f9\uab5c-\uab5f\uab69\ufb00-\ufb06\ufb13-\ufb17\ufb20-\ufb28\ufb4f-\ufbb1\ufbd3-\ufc5a\ufc64-\ufc8f\ufc91-\ufcd8\ufcda-\ufcf1\ufcf5-\ufd3b\ufd50-\ufd8f\ufd92-\ufdc7\ufdf0-\ufdf9\ufe80-\ufefc\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff66-\uff9f\u{10781}-\u{10785}\u{10787}-\u{107b0}\u{107b2}-\u{107ba}\u{1ccf0}-\u{1ccf9}\u{1d400}-\u{1d454}\u{1d456}-\u{1d49c}\u{1d49e}-\u{1d49f}\u{1d4a2}\u{1d4a5}-\u{1d4a6}\u{1d4a9}-\u{1d4ac}\u{1d4ae}-\u{1d4b9}\u{1d4bb}\u{1d4bd}-\u{1d4c3}\u{1d4c5}-\u{1d505}\u{1d507}-\u{1d50a}\u{1d50d}-\u{1d514}\u{1d516}-\u{1d51c}\u{1d51e}-\u{1d539}\u{1d53b}-\u{1d53e}\u{1d540}-\u{1d544}\u{1d546}\u{1d54a}-\u{1d550}\u{1d552}-\u{1d6a5}\u{1d6a8}-\u{1d6c0}\u{1d6c2}-\u{1d6da}\u{1d6dc}-\u{1d6fa}\u{1d6fc}-\u{1d714}\u{1d716}-\u{1d734}\u{1d736}-\u{1d74e}\u{1d750}-\u{1d76e}\u{1d770}-\u{1d788}\u{1d78a}-\u{1d7a8}\u{1d7aa}-\u{1d7c2}\u{1d7c4}-\u{1d7cb}\u{1d7ce}-\u{1d7ff}\u{1e030}-\u{1e06d}\u{1ee00}-\u{1ee03}\u{1ee05}-\u{1ee1f}\u{1ee21}-\u{1ee22}\u{1ee24}\u{1ee27}\u{1ee29}-\u{1ee32}\u{1ee34}-\u{1ee37}\u{1ee39}\u{1ee3b}\u{1ee42}\u{1ee47}\u{1ee49}\u{1ee4b}\u{1ee4d}-\u{1ee4f}\u{1ee51}-\u{1ee52}\u{1ee54}\u{1ee57}\u{1ee59}\u{1ee5b}\u{1ee5d}\u{1ee5f}\u{1ee61}-\u{1ee62}\u{1ee64}\u{1ee67}-\u{1ee6a}\u{1ee6c}-\u{1ee72}\u{1ee74}-\u{1ee77}\u{1ee79}-\u{1ee7c}\u{1ee7e}\u{1ee80}-\u{1ee89}\u{1ee8b}-\u{1ee9b}\u{1eea1}-\u{1eea3}\u{1eea5}-\u{1eea9}\u{1eeab}-\u{1eebb}\u{1fbf0}-\u{1fbf9}";

/** Whether a word holds a character this rule changes. */
const changed = new RegExp(`[${ignorableCharacters}${compatibilityCharacters}]`, "u");
const ignorable = new RegExp(`[${ignorableCharacters}]`, "gu");
const compatible = new RegExp(`[${compatibilityCharacters}]+`, "gu");

/** Whether a text holds any character this rule changes: one scan, for a text with none (most) all it costs. */
export function holdsCompatibilityForm(text: string): boolean {
  return changed.test(text);
}

/**
 * A word (a run of token characters) as search reads it: ignorable characters dropped, compatibility forms
 * replaced (see above). The same string, unchanged, for a word that holds none.
 */
export function compatibleWord(word: string): string {
  if (!changed.test(word)) return word;
  return word.replace(ignorable, "").replace(compatible, (run) => run.normalize("NFKC"));
}
