import { ContextError, loneSurrogateIndex } from "@contextblocks/core";
import type { SqlDialect } from "@contextblocks/sql";

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
