/**
 * SQLite stores text as UTF-8, where a lone UTF-16 surrogate cannot exist: it would be replaced with
 * U+FFFD, silently changing the text (two keys could become one). Stores refuse such text instead.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The index of the first lone surrogate in `text`, or -1 when the text is well-formed. */
export function loneSurrogateIndex(text: string): number {
  // `String.prototype.isWellFormed` (ES2024: Node 20, workerd) answers the common case without the
  // regular expression's lookarounds; the expression only runs to find where a lone surrogate is.
  if ((text as { isWellFormed?: () => boolean }).isWellFormed?.() === true) return -1;
  return LONE_SURROGATE.exec(text)?.index ?? -1;
}

/** True when `text` has no lone surrogate, so SQLite stores it unchanged. */
export function isWellFormed(text: string): boolean {
  return loneSurrogateIndex(text) === -1;
}

/** Throws the error `refuse(index)` makes when `text` has a lone surrogate (callers mint their own error). */
export function assertWellFormed(text: string, refuse: (index: number) => Error): void {
  const index = loneSurrogateIndex(text);
  if (index !== -1) throw refuse(index);
}

/**
 * True when `error`, or an error in its `cause` chain (an agents `SqlError` wraps SQLite's), says a table
 * is missing; with `table`, only that table (optionally `main.`-qualified). Durable Objects,
 * better-sqlite3 and agents all carry SQLite's message, `no such table: <name>`.
 */
export function isMissingTableError(error: unknown, table?: string): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const at = current.message.toLowerCase().indexOf("no such table:");
    if (at !== -1) {
      if (table === undefined) return true;
      const name = current.message
        .slice(at + "no such table:".length)
        .trim()
        .replace(/^main\./i, "");
      if (name.toLowerCase().startsWith(table.toLowerCase())) {
        const after = name.charAt(table.length);
        if (after === "" || !/[A-Za-z0-9_]/.test(after)) return true;
      }
    }
    current = current.cause;
  }
  return false;
}
