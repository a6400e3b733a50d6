/**
 * The index of the first lone UTF-16 surrogate in `text`, or -1 when there is none. SQLite keeps text as
 * UTF-8, where a lone surrogate cannot exist: drivers replace it with U+FFFD, so two different strings would
 * be stored as one. A single scan, linear in the length of the text.
 */
export function loneSurrogateIndex(text: string): number {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0xd800 || code > 0xdfff) continue;
    const next = text.charCodeAt(index + 1);
    if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      index++;
      continue;
    }
    return index;
  }
  return -1;
}

/** Whether `text` is well-formed UTF-16 (no lone surrogate), so SQLite stores it unchanged. */
export function isWellFormed(text: string): boolean {
  return loneSurrogateIndex(text) === -1;
}
