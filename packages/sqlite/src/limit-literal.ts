import type { SqlStatement } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";

/**
 * A `LIMIT` count written into the statement's text instead of bound. SQLite (3.47 and later) reads a bound
 * `LIMIT` as a constant when it plans the statement, so binding it again (better-sqlite3 binds on every run)
 * expires the prepared statement and every run prepares it again: about a sixth of a session search's time.
 */
export function limitLiteral(count: number): SqlStatement {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new TypeError(`limitLiteral: expected a whole number of rows, got ${String(count)}`);
  }
  return raw(String(count));
}
