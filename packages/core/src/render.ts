/** The rule line above and below each section header: 46 box-drawing double lines. */
export const SECTION_RULE = "═".repeat(46);

/** The character rule lines are drawn with (U+2550). */
const RULE_CHARACTER = 0x2550;

/**
 * Characters a reader does not see at the start of a line: blanks (`\s` without line breaks: spaces and
 * tabs of any kind, BOM), controls (`Cc`: NUL, the C0 separators U+001C–U+001F, DEL, C1), format characters
 * (`Cf`: zero-width space and joiners, bidi controls, tag characters), combining marks with nothing to
 * combine with (`Mn`, `Me`: U+034F, U+20DD…), default-ignorable code points (variation selectors
 * U+FE00–U+FE0F and U+E0100–U+E01EF, Mongolian selectors U+180B–U+180F, Hangul fillers U+115F, U+1160,
 * U+3164, U+FFA0, …) and the Braille blank U+2800. Tested one code point at a time, so it runs in linear
 * time whatever the content.
 */
const UNSEEN = /^[\s\p{Cc}\p{Cf}\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}\u2800]$/u;

/** Line breaks: `\n`, vertical tab, form feed, `\r`, NEL, U+2028, U+2029. */
function isLineBreak(code: number): boolean {
  return (code >= 0x0a && code <= 0x0d) || code === 0x85 || code === 0x2028 || code === 0x2029;
}

function isUnseen(code: number): boolean {
  // Printable ASCII is the common case: only the space is unseen there.
  if (code > 0x20 && code < 0x7f) return false;
  return UNSEEN.test(String.fromCodePoint(code));
}

/**
 * The structure rule. Only the renderer may start a line with `═`: in block content, the first `═` of a line
 * is written as `=` when only characters a reader does not see come before it on that line. A line starts
 * at the very start of the content or after any line break (`\n`, `\r`, vertical tab, form feed, NEL,
 * U+2028, U+2029). Unseen are: blanks (spaces and tabs of any kind, BOM), control characters (`Cc`, such as
 * NUL and the C0 separators U+001C–U+001F), format characters (`Cf`: zero-width space, joiners, bidi
 * controls, tags), combining marks (`Mn`, `Me`, such as U+034F), default-ignorable code points (variation
 * selectors U+FE00–U+FE0F and U+E0100–U+E01EF, U+180B–U+180F, Hangul fillers U+115F, U+1160, U+3164, U+FFA0)
 * and the Braille blank U+2800. Content therefore cannot produce a rule line, not even one a reader would
 * take for a rule, so it cannot open a section, forge a header, or pass for another block when the prompt
 * is parsed back (drift detection, reminders). Content without such lines renders byte for byte.
 *
 * A single left-to-right scan: linear in the length of the content, whatever it holds.
 */
export function neutralizeContent(content: string): string {
  if (!content.includes("═")) return content;
  let result = "";
  let copied = 0;
  let atLineStart = true;
  for (let index = 0; index < content.length; ) {
    const code = content.codePointAt(index) ?? 0;
    const width = code > 0xffff ? 2 : 1;
    if (isLineBreak(code)) {
      atLineStart = true;
    } else if (atLineStart) {
      if (code === RULE_CHARACTER) {
        result += `${content.slice(copied, index)}=`;
        copied = index + 1;
        atLineStart = false;
      } else if (!isUnseen(code)) {
        atLineStart = false;
      }
    }
    index += width;
  }
  return copied === 0 ? content : result + content.slice(copied);
}
