import { raw, type SqlClient, sql } from "@contextblocks/sql";
import { indexDataTable, scopesTable } from "./schema.js";

/**
 * Whether a search restricts FTS5 to its scope inside the MATCH (`scope : 17 AND (...)`) or filters the ranked
 * rows (`scope = 17`). Both give the same results; the cost differs:
 *
 * - When the scope holds most of the index (one knowledge base per database, the usual case), intersecting
 *   with its posting list, which lists nearly every entry, made a search ten times slower at 20k entries,
 *   while the filter skips the few rows of other scopes.
 * - When the scope is a small part of the index (a session's label beside a large knowledge base), the
 *   filter would rank and read the other scopes' matches; in the MATCH, FTS5 reads only the scope's.
 *
 * The share is read with one statement of two rows (the scope's count, and FTS5's own entry count: row 1 of
 * its `_data` table starts with it as a varint) on the first search and again every `refreshEvery` searches,
 * so a label that grows or shrinks beside others switches within that many searches (and a new provider
 * instance, as a Durable Object has per wake-up, reads it on its first search).
 */
export class ScopeShare {
  #small: boolean | undefined;
  #searches = 0;

  constructor(
    private readonly client: SqlClient,
    readonly scope: number,
    private readonly refreshEvery = 16,
  ) {}

  /** True when the scope's token should be part of the MATCH. */
  async inMatch(): Promise<boolean> {
    if (this.#small === undefined || this.#searches >= this.refreshEvery) {
      this.#searches = 0;
      const [row] = await this.client.run<{ entries: unknown; averages: unknown }>(sql`
        SELECT (SELECT entries FROM ${raw(scopesTable)} WHERE id = ${this.scope}) AS entries,
          (SELECT block FROM ${raw(indexDataTable)} WHERE id = 1) AS averages`);
      const entries = Number(row?.entries ?? 0);
      const documents = leadingVarint(row?.averages) ?? 0;
      this.#small = documents >= minimumDocuments && entries * 2 < documents;
    }
    this.#searches++;
    return this.#small;
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
