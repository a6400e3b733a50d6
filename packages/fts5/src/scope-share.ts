import { type SqlClient, sql } from "@contextblocks/sql";
import { raw } from "@contextblocks/sql/store-kit";
import { indexDataTable, scopesTable } from "./schema.js";

export type ScopePlacement = "alone" | "most" | "small";

/**
 * Where a search restricts FTS5 to its scope (search.ts). All give the same results; the cost differs:
 *
 * - `"alone"`: the scope held every entry of the index when last read (one knowledge base per database, the
 *   usual case). FTS5 ranks the matches and keeps the best `limit` without reading any row's columns, and
 *   only those rows are read and checked to be the scope's; if one is not (another label wrote since), the
 *   search runs again as `"most"`.
 * - `"most"`: the scope holds at least half the index. FTS5 sorts the matches (`ORDER BY rank`) and the
 *   rows are filtered in that order (`scope = 17`) until `limit` are the scope's. (Intersecting with the
 *   scope's posting list, which lists nearly every entry, made a search ten times slower at 20k entries.)
 * - `"small"`: the scope is a small part of the index (a session's label beside a large knowledge base): the
 *   filter would rank and read the other scopes' matches, so its token is part of the MATCH
 *   (`scope : 17 AND (...)`) and FTS5 reads only the scope's.
 *
 * The share is read with one statement of two rows (the scope's count, and FTS5's own entry count: row 1 of
 * its `_data` table starts with it as a varint) on the first search and again every `refreshEvery` searches,
 * so a label that grows or shrinks beside others switches within that many searches (and a new provider
 * instance, as a Durable Object has per wake-up, reads it on its first search).
 */
export class ScopeShare {
  #placement: ScopePlacement | undefined;
  #searches = 0;

  constructor(
    private readonly client: SqlClient,
    readonly scope: number,
    private readonly refreshEvery = 16,
  ) {}

  /** How the next search restricts FTS5 to the scope. */
  async placement(): Promise<ScopePlacement> {
    if (this.#placement === undefined || this.#searches >= this.refreshEvery) {
      this.#searches = 0;
      const [row] = await this.client.run<{ entries: unknown; averages: unknown }>(sql`
        SELECT (SELECT entries FROM ${raw(scopesTable)} WHERE id = ${this.scope}) AS entries,
          (SELECT block FROM ${raw(indexDataTable)} WHERE id = 1) AS averages`);
      const entries = Number(row?.entries ?? 0);
      const documents = leadingVarint(row?.averages) ?? 0;
      this.#placement =
        entries === documents
          ? "alone"
          : documents >= minimumDocuments && entries * 2 < documents
            ? "small"
            : "most";
    }
    this.#searches++;
    return this.#placement;
  }

  /** The scope was found not to be alone: read the share again before the next search. */
  notAlone(): void {
    this.#placement = undefined;
  }
}

/** Below this many entries in the database, either way costs next to nothing. */
const minimumDocuments = 64;

/**
 * The first SQLite varint of a blob (big-endian groups of 7 bits, high bit set on all but the last; a ninth
 * byte carries 8 bits), or `undefined` when the value is not a blob. An empty blob (a new index) is 0.
 */
export function leadingVarint(value: unknown): number | undefined {
  let bytes: Uint8Array;
  if (value instanceof Uint8Array) bytes = value;
  else if (value instanceof ArrayBuffer) bytes = new Uint8Array(value);
  else return undefined;
  let result = 0;
  for (let index = 0; index < bytes.length && index < 9; index++) {
    const byte = bytes[index] ?? 0;
    if (index === 8) return result * 256 + byte;
    result = result * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return result;
  }
  return result;
}
