/**
 * True when `error`, or an error in its `cause` chain, is a database refusing a write because it only reads:
 * SQLite opened read-only (better-sqlite3's `readonly: true`, `PRAGMA query_only`; code `SQLITE_READONLY…`, or
 * its message "attempt to write a readonly database" where a driver carries no code) or a Postgres read-only
 * transaction (a hot standby, `default_transaction_read_only`; SQLSTATE `25006`). A search that would first
 * bring an index up to date can then read it as it stands instead of failing.
 */
export function isReadOnlyRefusal(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && (code.startsWith("SQLITE_READONLY") || code === "25006")) return true;
    if (/attempt to write a readonly database/i.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}
