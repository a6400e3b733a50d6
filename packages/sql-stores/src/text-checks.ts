import { ContextError } from "@contextblocks/core";
import { loneSurrogateIndex } from "@contextblocks/core/store-kit";
import { rowTooLarge, type SqlDialect } from "@contextblocks/sql/store-kit";

/**
 * What keeps `text` from being stored unchanged in `dialect`, with its index, or `null`. Both store text as
 * UTF-8, where a lone UTF-16 surrogate has no form (it would silently become U+FFFD); Postgres `text` also
 * cannot hold NUL.
 */
export function unstorable(text: string, dialect: SqlDialect): { problem: string; index: number } | null {
  const surrogate = loneSurrogateIndex(text);
  const nul = dialect === "postgres" ? text.indexOf("\u0000") : -1;
  if (nul !== -1 && (surrogate === -1 || nul < surrogate)) return { problem: "a NUL character", index: nul };
  if (surrogate !== -1) return { problem: "a lone UTF-16 surrogate", index: surrogate };
  return null;
}

const DATABASE_NAME = { sqlite: "SQLite", postgres: "Postgres text" } as const;

/** Refuses text the database would change, naming the field, the index and the store (`owner`). */
export function checkStorable(
  text: string,
  what: string,
  owner: string,
  dialect: SqlDialect,
  code: "INVALID_CONFIG" | "INVALID_INPUT",
  label: string | undefined,
): void {
  const found = unstorable(text, dialect);
  if (found === null) return;
  throw new ContextError(
    code,
    `${owner}: the ${what} has ${found.problem} at index ${found.index}, which ${DATABASE_NAME[dialect]} cannot store unchanged`,
    label === undefined ? undefined : { label },
  );
}

/**
 * Refuses a row whose text passes `maxRowBytes` before anything is written, naming the field and the store:
 * a Durable Object's SQLite would refuse it with a bare `SQLITE_TOOBIG`, and the same value is refused on
 * every backend so what is stored on Node is storable in a Durable Object.
 */
export function checkRowSize(
  texts: readonly string[],
  what: string,
  owner: string,
  label: string | undefined,
): void {
  const problem = rowTooLarge(texts);
  if (problem === undefined) return;
  throw new ContextError(
    "INVALID_INPUT",
    `${owner}: the ${what} with its row's other text ${problem}: shorten it or split it`,
    label === undefined ? undefined : { label },
  );
}
