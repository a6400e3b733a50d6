import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { RememberedTails } from "./remembered-tails.js";

/**
 * The latest leaf of a session on the lean layout (session-schema.ts), which has no leaf pointer and no
 * session index: children are inserted after their parents, so a session's newest row (largest `rowid`)
 * has none and is its latest leaf. It is found once per client and session, then kept here; what other
 * writers did meanwhile is caught by `tailStill`, which the append puts in its conditional insert, so an
 * append reads no more than that and writes only its row (as Cloudflare agents' `agents/sessions` keeps a
 * session's tail in memory, but checked on every use, so two writers on one database never fork the path).
 */
export interface Tail {
  /** The newest message of the session, or `null` when it has none. */
  leaf: { id: string; rowid: number; depth: number | null; pathTokens: number | null } | null;
  /** The largest `rowid` of the table when the tail was read: no message of the session lies above it. */
  horizon: number;
  /**
   * The id of the row at `horizon` when it is not the leaf's (another session's newest message), else
   * `undefined`. Were that row deleted, SQLite would give its rowid to the next insert, perhaps another
   * writer's message in this session, which `rowid > horizon` would not see: the check compares the id too.
   */
  top?: string | undefined;
}

const tails = new RememberedTails<Tail>();

export function cachedTail(client: SqlClient, sessionId: string): Tail | undefined {
  return tails.get(client, sessionId);
}

export function rememberTail(client: SqlClient, sessionId: string, tail: Tail | undefined): void {
  tails.set(client, sessionId, tail);
}

/**
 * True while `tail` still holds: its leaf is still stored and no message of the session was added above
 * its horizon. Reads the leaf's row (a rowid seek) and the rows added to the table since (none when this
 * client wrote last).
 */
export function tailStill(tail: Tail, sessionId: string): SqlStatement {
  let newer = sql`NOT EXISTS (SELECT 1 FROM assistant_messages
    WHERE rowid > ${tail.horizon} AND session_id = ${sessionId})`;
  if (tail.top !== undefined) {
    newer = sql`${newer} AND EXISTS (SELECT 1 FROM assistant_messages
      WHERE rowid = ${tail.horizon} AND id = ${tail.top})`;
  }
  if (tail.leaf === null) return newer;
  return sql`${newer} AND EXISTS (SELECT 1 FROM assistant_messages
    WHERE rowid = ${tail.leaf.rowid} AND id = ${tail.leaf.id})`;
}

/**
 * Reads the tail in one statement (one snapshot: a message appended between two reads cannot be missed).
 * Without a session index this reads the table backwards from its end to the session's newest row: once
 * per client and session, and again only after another writer changed the session.
 */
export async function readTail(client: SqlClient, sessionId: string): Promise<Tail> {
  const rows = await client.query<{
    horizon: number | null;
    top: string | null;
    rowid: number | null;
    id: string | null;
    depth: number | null;
    path_tokens: number | null;
  }>`
    SELECT (SELECT COALESCE(MAX(rowid), 0) FROM assistant_messages) AS horizon,
      (SELECT id FROM assistant_messages ORDER BY rowid DESC LIMIT 1) AS top,
      m.rowid AS rowid, m.id AS id, m.depth AS depth, m.path_tokens AS path_tokens
    FROM (SELECT 1) AS one LEFT JOIN (
      SELECT rowid, id, depth, path_tokens FROM assistant_messages WHERE session_id = ${sessionId}
      ORDER BY rowid DESC LIMIT 1) AS m ON 1`;
  const row = rows[0];
  const tail: Tail = {
    horizon: Number(row?.horizon ?? 0),
    // The leaf's own row is checked by every caller; another session's is checked by `tailStill`.
    top:
      row?.top === null || row?.top === undefined || Number(row.horizon) === Number(row.rowid)
        ? undefined
        : row.top,
    leaf:
      row?.id === null || row?.id === undefined
        ? null
        : {
            id: row.id,
            rowid: Number(row.rowid),
            depth: row.depth === null ? null : Number(row.depth),
            pathTokens: row.path_tokens === null ? null : Number(row.path_tokens),
          },
  };
  rememberTail(client, sessionId, tail);
  return tail;
}

/** The remembered tail if it still holds (one statement), else the tail read again. */
export async function currentTail(client: SqlClient, sessionId: string): Promise<Tail> {
  const cached = cachedTail(client, sessionId);
  if (cached !== undefined) {
    const rows = (await client.batch([sql`SELECT ${tailStill(cached, sessionId)} AS still`]))[0] as
      | { still: unknown }[]
      | undefined;
    if (Number(rows?.[0]?.still) === 1) return cached;
  }
  return readTail(client, sessionId);
}
