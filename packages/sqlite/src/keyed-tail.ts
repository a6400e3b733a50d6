import { type SqlClient, type SqlStatement, sql } from "@contextblocks/sql";
import { RememberedTails } from "./remembered-tails.js";

/**
 * The latest leaf of a session on the keyed layout (session-schema.ts). Its message table is one b-tree keyed
 * by id, with no order of its own: each message's `seq` is the rowid of its search row (`assistant_fts`),
 * written in the same transaction, and a new message takes the largest one + 1. So the session's newest
 * search row names its latest leaf (children are appended after their parents), and the largest search
 * rowid (`horizon`) moves with every append to any session.
 *
 * The tail is read once per client and session, then kept here; an append checks in its conditional insert
 * that the largest search rowid is still `horizon` (FTS5 answers it from its own structure: 0 billed rows),
 * so a second writer on the database (another store, a new `Session` per request) makes the append read the
 * tail again instead of forking the path, and two writers that pick the same `seq` collide on the search
 * row's rowid instead of both storing. (Cloudflare agents' `agents/sessions` keeps its tail in memory with
 * no such check.) A rowid range of an FTS5 table would not do: on a Durable Object it reads every row.
 */
export interface KeyedTail {
  /** The newest message of the session, or `null` when it has none. */
  leaf: { id: string; seq: number; depth: number | null; pathTokens: number | null } | null;
  /**
   * What the search row of a message appended under the leaf holds as its context, so the append reads no
   * row for it: the leaf's search text, and its parent's id, search rowid and text (`null`/`""` for a root).
   * Absent when not known (then the append reads them from the rows, as before).
   */
  context?: TailContext | undefined;
  /** The largest search rowid (`seq`) when the tail was read. */
  horizon: number;
  /**
   * The message id of the search row at `horizon` when it is not the leaf's (another session's newest
   * message): that row could be deleted and the rowid given again to a message of this session, so the
   * check compares the id too. When the leaf holds `horizon`, its row holds the rowid while it is stored.
   */
  top?: string | null;
}

export interface TailContext {
  text: string;
  parentId: string | null;
  parentSeq: number | null;
  parentText: string;
}

/**
 * After this client changed a message's text: a remembered context that holds it takes the new text (the
 * next append's search row carries it), so a streamed update costs the next append no read.
 */
export function rememberUpdatedText(client: SqlClient, sessionId: string, id: string, text: string): void {
  const tail = cachedKeyedTail(client, sessionId);
  const context = tail?.context;
  if (tail?.leaf === null || tail?.leaf === undefined || context === undefined) return;
  if (tail.leaf.id === id) tail.context = { ...context, text };
  else if (context.parentId === id) tail.context = { ...context, parentText: text };
}

const tails = new RememberedTails<KeyedTail>();

export function cachedKeyedTail(client: SqlClient, sessionId: string): KeyedTail | undefined {
  return tails.get(client, sessionId);
}

export function rememberKeyedTail(client: SqlClient, sessionId: string, tail: KeyedTail | undefined): void {
  tails.set(client, sessionId, tail);
}

/** The largest `seq` given so far (0 on an empty table). */
export const largestSeq: SqlStatement = sql`(SELECT COALESCE(MAX(rowid), 0) FROM assistant_fts)`;

/**
 * Before a statement that deletes search rows: a blank row (no id, no session, no text: no search finds it)
 * above the largest, so the largest search rowid never goes back. It counts every append and every delete,
 * so a tail whose leaf held it is proven current by that number alone (`KeyedLayout.latestLeaf`'s
 * `current`): an append reads no row for its parent. Without it, a deleted leaf at the top and another
 * writer's next append would give the same largest rowid back. One row written per delete.
 */
export const searchOrderBump: SqlStatement = sql`INSERT INTO assistant_fts (rowid, content)
  SELECT ${largestSeq} + 1, ''`;

/** True while nothing was appended (to any session) or removed at the top since `tail` was read. */
export function keyedTailStill(tail: KeyedTail): SqlStatement {
  if (tail.horizon === 0 || tail.leaf?.seq === tail.horizon) return sql`${largestSeq} = ${tail.horizon}`;
  return sql`${largestSeq} = ${tail.horizon} AND EXISTS (SELECT 1 FROM assistant_fts
    WHERE rowid = ${tail.horizon} AND id IS ${tail.top ?? null})`;
}

/**
 * Reads the tail in one statement: the session's newest search row, read backwards from the end of the
 * search table (rows of other sessions above it are read and skipped), and its message's row.
 */
export async function readKeyedTail(client: SqlClient, sessionId: string): Promise<KeyedTail> {
  const rows = await client.run<{
    horizon: number | null;
    top: string | null;
    seq: number | null;
    id: string | null;
    depth: number | null;
    path_tokens: number | null;
    text: string | null;
    parent_id: string | null;
    parent_row: number | null;
    parent_text: string | null;
  }>(sql`
    SELECT ${largestSeq} AS horizon,
      (SELECT id FROM assistant_fts ORDER BY rowid DESC LIMIT 1) AS top, f.rowid AS seq, m.id AS id, m.depth AS depth, m.path_tokens AS path_tokens,
      f.content AS text, m.parent_id AS parent_id, f.parent_row AS parent_row,
      (SELECT pf.content FROM assistant_fts pf WHERE pf.rowid = f.parent_row AND pf.id = m.parent_id) AS parent_text
    FROM (SELECT 1) AS one
    LEFT JOIN (SELECT rowid, id, content, parent_row FROM assistant_fts WHERE session_id = ${sessionId}
      ORDER BY rowid DESC LIMIT 1) AS f ON 1
    LEFT JOIN assistant_messages AS m ON m.id = f.id AND m.session_id = ${sessionId} AND m.seq = f.rowid`);
  const row = rows[0];
  // The context is known when the leaf is a root, or its parent's search row is where its own names it.
  const context: TailContext | undefined =
    row === undefined || row.id === null || typeof row.text !== "string"
      ? undefined
      : row.parent_id === null
        ? { text: row.text, parentId: null, parentSeq: null, parentText: "" }
        : typeof row.parent_text === "string" && row.parent_row !== null
          ? {
              text: row.text,
              parentId: row.parent_id,
              parentSeq: Number(row.parent_row),
              parentText: row.parent_text,
            }
          : undefined;
  const tail: KeyedTail = {
    horizon: Number(row?.horizon ?? 0),
    top: row?.top ?? null,
    leaf:
      row?.id === null || row?.id === undefined
        ? null
        : {
            id: row.id,
            seq: Number(row.seq),
            depth: row.depth === null ? null : Number(row.depth),
            pathTokens: row.path_tokens === null ? null : Number(row.path_tokens),
          },
    context,
  };
  rememberKeyedTail(client, sessionId, tail);
  return tail;
}

/** The remembered tail if it still holds (one statement, no row read), else the tail read again. */
export async function currentKeyedTail(client: SqlClient, sessionId: string): Promise<KeyedTail> {
  const cached = cachedKeyedTail(client, sessionId);
  if (cached !== undefined) {
    const rows = await client.run<{ still: unknown }>(sql`SELECT ${keyedTailStill(cached)} AS still`);
    if (Number(rows[0]?.still) === 1) return cached;
  }
  return readKeyedTail(client, sessionId);
}
