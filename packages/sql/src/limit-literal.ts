import { raw } from "./statement.js";
import type { SqlStatement } from "./types.js";

/**
 * A row count (`LIMIT`, `FETCH FIRST`) written into a statement's text instead of bound. Both databases plan
 * better with the number in the text: SQLite (3.47 and later) reads a bound `LIMIT` as a constant when it
 * plans, so binding it again on every run (as better-sqlite3 does) expires the prepared statement and each run
 * prepares it anew; Postgres's generic plan for a prepared statement assumes a bound `LIMIT` keeps a tenth of
 * the rows and may give up on the generic plan and plan every call. Only a whole number from 0 to
 * `Number.MAX_SAFE_INTEGER` is written: anything else throws, so no other text can reach the statement. Use it
 * for counts that take few values (a provider's limit, a search's candidates), or every count is its own text.
 */
export function limitLiteral(count: number): SqlStatement {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new TypeError(`limitLiteral: expected a whole number of rows, got ${String(count)}`);
  }
  return raw(String(count));
}
