import { type SqlStatement, sql } from "@contextblocks/sql";

/**
 * The CTE `leaf (id)`: the given message of the session, or its latest leaf (the newest message without a
 * child). The latest leaf is the `assistant_leaves` pointer row when it names a childless message of the
 * session (two reads by key); otherwise (rows another writer made, or a pointer a delete left empty) the
 * newest childless message, found by a scan of the session that runs only then.
 */
export function leafStatement(sessionId: string, leafId: string | undefined): SqlStatement {
  if (leafId !== undefined) {
    return sql`leaf AS (SELECT id FROM assistant_messages WHERE session_id = ${sessionId} AND id = ${leafId})`;
  }
  return sql`pointed AS MATERIALIZED (
  SELECT m.id FROM assistant_leaves l CROSS JOIN LATERAL (
    SELECT id FROM assistant_messages WHERE session_id = l.session_id AND id = l.leaf_id LIMIT 1
  ) m
  WHERE l.session_id = ${sessionId} AND ${childless(sql`l.session_id`, sql`m.id`)}
),
leaf AS (
  SELECT id FROM pointed
  UNION ALL
  (SELECT m.id FROM assistant_messages m
   WHERE m.session_id = ${sessionId} AND NOT EXISTS (SELECT 1 FROM pointed)
     AND ${noChildAmong(sql`m`, sessionId)}
   ORDER BY m.position DESC LIMIT 1)
)`;
}

/** The session's newest childless message (a scan of the session): where the pointer goes after a delete. */
export function newestChildlessStatement(sessionId: string): SqlStatement {
  return sql`SELECT m.id FROM assistant_messages m
WHERE m.session_id = ${sessionId} AND ${noChildAmong(sql`m`, sessionId)}
ORDER BY m.position DESC LIMIT 1`;
}

/**
 * "The message `m` (an alias) of `sessionId` has no child", for a scan of the whole session: its id is not a key
 * of one JSON object of the session's parents, built once per statement (an uncorrelated sub-select; NULL when
 * no message has a parent) and probed by binary search, so every plan reads the session's messages once,
 * whatever the statistics say. A `NOT EXISTS` against the children was an anti-join the planner chose the
 * shape of: with statistics taken while the table held 3 messages, a nested loop that read the session's
 * children once per message (3,001 messages: 4.5 million rows compared, 290 ms for a statement of a few).
 * One probe per row (`childless`) would be safe too, but its estimate grows by eight per message: at about
 * 12,000 messages that pushed a statement holding it past Postgres's `jit_above_cost` (100,000 by default),
 * and each append paid 100 ms and more compiling expressions for a branch that almost never runs; this one
 * grows by a few units. Where the pointer names the leaf, the object is never built (the branch does not run).
 */
function noChildAmong(m: SqlStatement, sessionId: string): SqlStatement {
  // `->`, not the `?` operator: agents' `PostgresConnection` takes `?` as a placeholder.
  return sql`((SELECT jsonb_object_agg(c.parent_id, true) FROM assistant_messages c
    WHERE c.session_id = ${sessionId} AND c.parent_id IS NOT NULL) -> ${m}.id) IS NULL`;
}

/**
 * "Message `id` has no child", as a scalar subquery: never turned into an anti-join over the session, so it
 * is one probe of `idx_assistant_msg_session_parent` per row whatever the table's statistics say.
 */
function childless(session: SqlStatement, id: SqlStatement): SqlStatement {
  return sql`(SELECT count(*) FROM (SELECT 1 FROM assistant_messages c
    WHERE c.session_id = ${session} AND c.parent_id = ${id} LIMIT 1) child) = 0`;
}
