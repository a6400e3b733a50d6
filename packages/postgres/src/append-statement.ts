import { type SqlStatement, sql } from "@contextblocks/sql";
import { leafStatement } from "./latest-leaf.js";
import { storedSearchDay } from "./message-search-fields.js";

/** One message of a chain as the append statement writes it (its searchable text already indexable). */
export interface AppendRow {
  id: string;
  role: string;
  content: string;
  text: string;
  tokens: number | null;
  createdAt: string | null;
  /** Its search fields (message-search-fields.ts): `time` `null` when its day is its stored time's. */
  speaker: string;
  time: string | null;
}

/** Where the chain goes: the first row's parent (`undefined`: the latest leaf) and the leaf expected. */
export interface AppendTarget {
  parentId: string | null | undefined;
  expectedLeafId: string | null | undefined;
}

/**
 * The append of a chain, ONE statement (one round trip, no BEGIN/COMMIT). It reads what the checks need, in
 * the order the storage contract lists them (the latest leaf against the expected one, the named parent, then
 * per row: its id stored in any session, or named as parent by a message of this session), and writes only
 * when all pass: the session's `assistant_leaves` pointer row moves to the chain's last message, then the
 * rows go in, each under the one before, with their search fields (speaker, day: `search_state` 2, so a
 * search has nothing to catch up for them). It answers one row: `status` (the first conflict, or `appended`),
 * `stored` (rows written), the first row's parent, the latest leaf read, and the conflicting row's holder.
 *
 * Why a write it makes is never based on a stale read. Under READ COMMITTED every read of the statement
 * sees one snapshot, taken when it starts: a writer that commits after that is not seen, even once this
 * statement has waited for it. So the statement reads the pointer row's version (`xmin`) in its snapshot,
 * and its upsert of that row (which takes the row lock, and on a conflict re-reads the row's newest version
 * after waiting) moves it only if the version is still the one read. Every write that can change what an
 * append checks in this session (an append, a delete, a clear) writes the pointer row first, so an
 * unchanged version means no such write committed since the snapshot, and every read above still holds
 * when the rows are inserted. A changed version (or a pointer row that appeared or vanished) means the
 * statement writes nothing and answers `appended` with `stored` 0: the caller runs it again, on a new
 * snapshot. Ids are unique per database, not per session: a concurrent insert of the same id in another
 * session is refused by the unique index on `id` (23505), and the caller runs the statement again, which
 * then sees the holder.
 */
export function appendStatement(
  sessionId: string,
  rows: readonly AppendRow[],
  target: AppendTarget,
): SqlStatement {
  const { parentId, expectedLeafId } = target;
  const lastId = rows.at(-1)?.id ?? "";
  const needsLeaf = parentId === undefined || expectedLeafId !== undefined;
  const leaf = needsLeaf
    ? leafStatement(sessionId, undefined)
    : sql`leaf AS (SELECT NULL::text AS id WHERE false)`;
  let parent: SqlStatement;
  if (parentId === undefined) {
    parent = sql`SELECT m.id, m.parent_id, m.text_content FROM leaf
  JOIN assistant_messages m ON m.session_id = ${sessionId} AND m.id = leaf.id`;
  } else if (parentId === null) {
    parent = sql`SELECT NULL::text AS id, NULL::text AS parent_id, NULL::text AS text_content WHERE false`;
  } else {
    parent = sql`SELECT id, parent_id, text_content FROM assistant_messages
  WHERE session_id = ${sessionId} AND id = ${parentId}`;
  }
  const stale =
    expectedLeafId === undefined
      ? sql`false`
      : sql`(SELECT id FROM leaf) IS DISTINCT FROM ${expectedLeafId}::text`;
  const day = storedSearchDay(sql`g.time`, sql`g.created_at`);
  const missing = typeof parentId === "string" ? sql`NOT EXISTS (SELECT 1 FROM parent)` : sql`false`;
  return sql`WITH ${leaf},
given AS MATERIALIZED (
  SELECT (r.ordinality - 1)::int AS index, r.value->>'id' AS id, r.value->>'role' AS role,
    r.value->>'content' AS content, r.value->>'text' AS text, (r.value->>'tokens')::int AS tokens,
    coalesce((r.value->>'createdAt')::timestamptz, now()) AS created_at, r.value->>'speaker' AS speaker,
    r.value->>'time' AS time
  FROM json_array_elements(${JSON.stringify(rows)}::text::json) WITH ORDINALITY AS r (value, ordinality)
),
parent AS MATERIALIZED (${parent}),
clash AS MATERIALIZED (
  SELECT g.index, holder.session_id, holder.parent_id, holder.role, holder.content, holder.created_at,
    holder.tokens, octet_length(holder.content) AS bytes
  FROM given g LEFT JOIN LATERAL (
    SELECT h.session_id, h.parent_id, h.role, h.content, h.created_at, h.tokens FROM assistant_messages h
    WHERE h.id = g.id ORDER BY h.session_id = ${sessionId} DESC LIMIT 1
  ) holder ON true
  WHERE holder.session_id IS NOT NULL
    OR EXISTS (SELECT 1 FROM assistant_messages o WHERE o.session_id = ${sessionId} AND o.parent_id = g.id)
  ORDER BY g.index LIMIT 1
),
decision AS MATERIALIZED (
  SELECT CASE
    WHEN ${stale} THEN 'stale-leaf'
    WHEN ${missing} THEN 'parent-missing'
    WHEN EXISTS (SELECT 1 FROM clash WHERE session_id IS NOT NULL) THEN 'id-taken'
    WHEN EXISTS (SELECT 1 FROM clash) THEN 'still-a-parent'
    ELSE 'appended' END AS status
),
snapshot AS MATERIALIZED (SELECT xmin AS version FROM assistant_leaves WHERE session_id = ${sessionId}),
claimed AS (
  INSERT INTO assistant_leaves AS l (session_id, leaf_id)
  SELECT ${sessionId}, CASE WHEN EXISTS (SELECT 1 FROM snapshot) THEN '' ELSE ${lastId} END
  FROM decision WHERE status = 'appended'
  ON CONFLICT (session_id) DO UPDATE SET leaf_id = ${lastId}, parent_id = NULL, depth = NULL
    WHERE l.xmin = (SELECT version FROM snapshot)
  RETURNING l.xmax = 0 AS created
),
current AS (SELECT 1 FROM claimed WHERE NOT created OR NOT EXISTS (SELECT 1 FROM snapshot)),
inserted AS (
  INSERT INTO assistant_messages (id, session_id, parent_id, role, content, text_content, created_at,
    context_text, tokens, speaker, time_text, search_state)
  SELECT g.id, ${sessionId},
    CASE WHEN g.index = 0 THEN (SELECT id FROM parent) ELSE lag(g.id) OVER chain END,
    g.role, g.content, g.text, g.created_at,
    CASE
      WHEN g.index = 0 THEN coalesce((SELECT p.text_content || E'\\n' || coalesce((SELECT up.text_content
        FROM assistant_messages up WHERE up.session_id = ${sessionId} AND up.id = p.parent_id), '') FROM parent p), '')
      WHEN g.index = 1 THEN lag(g.text) OVER chain || E'\\n' || coalesce((SELECT text_content FROM parent), '')
      ELSE lag(g.text) OVER chain || E'\\n' || lag(g.text, 2) OVER chain
    END,
    g.tokens, g.speaker,
    ${day.timeText},
    ${day.searchState}
  FROM given g
  WHERE EXISTS (SELECT 1 FROM current)
  WINDOW chain AS (ORDER BY g.index)
  RETURNING 1
)
SELECT decision.status, (SELECT count(*) FROM inserted)::int AS stored, (SELECT id FROM parent) AS parent_id,
  (SELECT id FROM leaf) AS leaf_id, clash.index AS clash_index, clash.session_id AS holder_session_id,
  clash.parent_id AS holder_parent_id, clash.role AS holder_role, clash.content AS holder_content,
  clash.created_at AS holder_created_at, clash.tokens AS holder_tokens, clash.bytes AS holder_bytes
FROM decision LEFT JOIN clash ON true`;
}
