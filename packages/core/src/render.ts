/** The rule line above and below each section header: 46 box-drawing double lines. */
export const SECTION_RULE = "═".repeat(46);

/** A `═` at the start of a line, after only blanks and invisible characters (see `neutralizeContent`). */
const LINE_LEADING_RULE =
  /(^|[\n\r\u000b\u000c\u0085\u2028\u2029])((?:[^\S\n\r\u000b\u000c\u0085\u2028\u2029]|\p{Cf})*)═/gu;

/**
 * The structure rule. Only the renderer may start a line with `═`: in block content, the first `═` of a line
 * is written as `=` when only blanks or invisible characters come before it on that line. A line starts at
 * the very start of the content or after any line break (`\n`, `\r`, vertical tab, form feed, NEL, U+2028,
 * U+2029); blanks are spaces and tabs of any kind, invisible characters are Unicode format characters
 * (zero-width space, BOM, …). Content therefore cannot produce a rule line, not even one a reader would take
 * for a rule, so it cannot open a section, forge a header, or pass for another block when the prompt is
 * parsed back (drift detection, reminders). Content without such lines renders byte for byte.
 */
export function neutralizeContent(content: string): string {
  return content.replace(LINE_LEADING_RULE, "$1$2=");
}
