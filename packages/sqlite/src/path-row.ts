import type { MessageRecord } from "@contextblocks/sessions/store-kit";
import type { SqlStatement } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";

/** A stored message's place: what an append needs of its parent, and where a walk starts. */
export interface PlaceRow {
  id: string;
  /** `rowid` on the lean and indexed layouts, `seq` on the keyed one: the order messages were stored in. */
  order: number;
  /** Its distance from the root (0: a root); `null` where not known (another writer's row, a delete above). */
  depth: number | null;
  /** The token stamps of its path root..it summed; `null` where not known. */
  pathTokens: number | null;
}

/** A row of a path as a walk reads it, leaf first. */
export interface PathRow {
  order: number;
  id: string;
  role: string;
  parent_id: string | null;
  tokens: number | null;
  created_at: string | null;
  /** The row's slice of the stored JSON (`""` when the walk reads no content). */
  content: string;
  content_chunks: number | null;
  /** UTF-8 bytes of the stored JSON, continuation rows included (0 unless the walk measures). */
  bytes: number;
}

/**
 * The record of a row: its place and stamp, and what was read besides (`content`, its continuation rows
 * joined; `bytes`, its size; `place`, nothing more).
 */
export function recordOf(
  row: PathRow,
  read: "content" | "bytes" | "place",
  continued?: ReadonlyMap<string, string>,
): MessageRecord {
  const record: MessageRecord = {
    id: row.id,
    parentId: row.parent_id ?? null,
    role: row.role,
    createdAt: row.created_at ?? null,
  };
  const tokens = wholeNumber(row.tokens);
  if (tokens !== null) record.tokens = tokens;
  if (read === "content") record.content = row.content + (continued?.get(row.id) ?? "");
  else if (read === "bytes") record.bytes = Number(row.bytes);
  return record;
}

/** A whole number ≥ 0 read from a column, or `null` (a row without one, or a value edited by hand). */
export function wholeNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const number = Number(value);
  return Number.isFinite(number) && number >= 0 ? Math.floor(number) : null;
}

/** UTF-8 bytes of the message of the row `alias`, its continuation rows included. */
export function storedBytes(alias: string): SqlStatement {
  return raw(`(length(CAST(${alias}.content AS BLOB)) + (CASE WHEN COALESCE(${alias}.content_chunks, 0) = 0 THEN 0 ELSE (
  SELECT SUM(length(CAST(c.content AS BLOB))) FROM assistant_message_chunks c WHERE c.id = ${alias}.id) END))`);
}
