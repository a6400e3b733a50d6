/**
 * Whether text survives a store that keeps UTF-8 (SQLite, Postgres, R2 object names and metadata) unchanged.
 * A lone UTF-16 surrogate has no UTF-8 form: the store or its driver would put U+FFFD in its place, silently
 * changing the text (two keys could become one that neither addresses). Stores refuse such text instead.
 * Linear time: one character class per branch, one look-around each.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The index of the first lone surrogate in `text`, or -1 when the text is well-formed. */
export function loneSurrogateIndex(text: string): number {
  // `String.prototype.isWellFormed` (ES2024: Node 20, workerd) answers the common case without the
  // regular expression's look-arounds; the expression only runs to find where a lone surrogate is.
  if ((text as { isWellFormed?: () => boolean }).isWellFormed?.() === true) return -1;
  return LONE_SURROGATE.exec(text)?.index ?? -1;
}

/** True when `text` has no lone surrogate, so a UTF-8 store keeps it unchanged (`String#isWellFormed`). */
export function isWellFormed(text: string): boolean {
  return loneSurrogateIndex(text) === -1;
}

/** Throws the error `refuse(index)` makes when `text` has a lone surrogate (callers mint their own error). */
export function assertWellFormed(text: string, refuse: (index: number) => Error): void {
  const index = loneSurrogateIndex(text);
  if (index !== -1) throw refuse(index);
}

/**
 * The first `length` UTF-16 units of `text`, one fewer where the cut would split a surrogate pair: a prefix that
 * stays well-formed (an index's text, an excerpt) when the text was.
 */
export function wellFormedPrefix(text: string, length: number): string {
  if (length >= text.length) return text;
  if (length <= 0) return "";
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}
