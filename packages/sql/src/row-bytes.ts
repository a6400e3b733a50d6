/**
 * The most bytes of text one stored row may hold. Durable Object SQLite refuses a row over 2 MB
 * (`SQLITE_TOOBIG`, "string or blob too big"); better-sqlite3 and Postgres take far more. Stores check
 * this before writing, on every backend, so what is stored on Node is storable on a Durable Object too and
 * an oversized value gets an error that names it instead of the raw SQLite one.
 */
export const maxRowBytes = 2_000_000;

/** The UTF-8 size of `text`, as SQLite stores it (a lone surrogate becomes the 3 bytes of U+FFFD). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit <= 0xdbff && unit >= 0xd800 && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) {
      bytes += 4; // a surrogate pair: one code point of 4 bytes
      index++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The UTF-8 size of `texts` together when it is over `limit`, else `undefined`. Text of at most a third of
 * the limit in UTF-16 units cannot be over it, so the usual case counts nothing.
 */
export function rowBytesOver(texts: readonly string[], limit: number = maxRowBytes): number | undefined {
  let units = 0;
  for (const text of texts) units += text.length;
  if (units * 3 <= limit) return undefined;
  let bytes = 0;
  for (const text of texts) bytes += utf8Bytes(text);
  return bytes > limit ? bytes : undefined;
}

/** `1234567` as `1,234,567`. */
const grouped = (count: number) => String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/**
 * What is wrong with a row of `texts` when it passes `maxRowBytes`, as the end of an error message ("is
 * 2,000,023 bytes as UTF-8; a stored row holds at most 2,000,000 ..."), else `undefined`.
 */
export function rowTooLarge(texts: readonly string[]): string | undefined {
  const bytes = rowBytesOver(texts);
  if (bytes === undefined) return undefined;
  return `is ${grouped(bytes)} bytes as UTF-8; a stored row holds at most ${grouped(maxRowBytes)} (a Durable Object's SQLite refuses larger rows)`;
}
