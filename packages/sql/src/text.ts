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
