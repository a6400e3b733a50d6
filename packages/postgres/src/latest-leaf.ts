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
     AND ${noChildAmong(sql`m`)}
   ORDER BY m.position DESC LIMIT 1)
)`;
}

/** The session's newest childless message (a scan of the session): where the pointer goes after a delete. */
export function newestChildlessStatement(sessionId: string): SqlStatement {
  return sql`SELECT m.id FROM assistant_messages m
WHERE m.session_id = ${sessionId} AND ${noChildAmong(sql`m`)}
ORDER BY m.position DESC LIMIT 1`;
}

/**
 * "The message `m` (an alias) has no child", for a scan of the whole session: a `NOT EXISTS` the planner may
 * join against the session's children at once. Its estimate then grows by a few units per message, where
 * one probe per row (`childless`) grows by eight: at about 12,000 messages that pushed a statement holding it
 * past Postgres's `jit_above_cost` (100,000 by default), and each append paid 100 ms and more compiling
 * expressions for a branch that almost never runs.
 */
function noChildAmong(m: SqlStatement): SqlStatement {
  return sql`NOT EXISTS (SELECT 1 FROM assistant_messages c WHERE c.session_id = ${m}.session_id AND c.parent_id = ${m}.id)`;
}

/**
 * "Message `id` has no child", as a scalar subquery: never turned into an anti-join over the session, so it
 * is one probe of `idx_assistant_msg_session_parent` per row whatever the table's statistics say.
 */
function childless(session: SqlStatement, id: SqlStatement): SqlStatement {
  return sql`(SELECT count(*) FROM (SELECT 1 FROM assistant_messages c
    WHERE c.session_id = ${session} AND c.parent_id = ${id} LIMIT 1) child) = 0`;
}
