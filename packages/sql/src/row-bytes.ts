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
    const width = utf8WidthAt(text, index);
    bytes += width;
    if (width === 4) index++;
  }
  return bytes;
}

/**
 * The longest start of `text` of at most `limit` UTF-8 bytes (as `utf8Bytes` counts them), never ending inside a
 * surrogate pair. Text of at most a third of the limit in UTF-16 units is returned without counting.
 */
export function utf8Prefix(text: string, limit: number): string {
  if (text.length * 3 <= limit) return text;
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const width = utf8WidthAt(text, index);
    bytes += width;
    if (bytes > limit) return text.slice(0, index);
    if (width === 4) index++;
  }
  return text;
}

/** The UTF-8 bytes of the character at `index`: 4 for a surrogate pair (both units), 3 for a lone surrogate. */
function utf8WidthAt(text: string, index: number): number {
  const unit = text.charCodeAt(index);
  if (unit < 0x80) return 1;
  if (unit < 0x800) return 2;
  if (unit <= 0xdbff && unit >= 0xd800 && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) return 4;
  return 3;
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
