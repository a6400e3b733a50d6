import { parseStoredMessage } from "@contextblocks/sessions/store-kit";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { messageFieldsOf } from "@contextblocks/text";

/**
 * The search fields of a message that its append does not write (as SQLite's lazy index, message-index.ts
 * there): its speaker and its day (`time_text`, `time_tsv`). A search first writes them for the messages
 * whose `search_state` is below 2 (a partial index finds them: the messages appended or updated since the
 * last search; 1 is a row an earlier release left waiting for the turns after it, which are now counted at
 * query time). Each message's fields are written once: a later append never rewrites an older row.
 */
export const pendingBatchSize = 500;

interface PendingRow {
  id: string;
  session_id: string;
  role: string;
  content: string;
  text_content: string;
  created_at: unknown;
  search_state: number;
  position: string | number;
}

export async function catchUpSearchFields(
  run: (statement: SqlStatement) => Promise<unknown[]>,
  sessionId: string | undefined,
): Promise<void> {
  let after = "0";
  for (;;) {
    const inSession = sessionId === undefined ? sql`` : sql`AND m.session_id = ${sessionId}`;
    const rows = (await run(sql`SELECT m.id, m.session_id, m.role, m.content, m.text_content, m.created_at,
  m.search_state, m.position
FROM assistant_messages m
WHERE m.search_state < 2 AND m.position > ${after}::bigint ${inSession}
ORDER BY m.position LIMIT ${pendingBatchSize}`)) as PendingRow[];
    const changed: { session: string; id: string; speaker?: string; time?: string }[] = [];
    for (const row of rows) {
      if (Number(row.search_state) !== 0) {
        changed.push({ session: row.session_id, id: row.id });
        continue;
      }
      const message = parseStoredMessage(row.content);
      const fields = messageFieldsOf(
        { role: row.role, metadata: message?.metadata, createdAt: message?.createdAt ?? row.created_at },
        row.text_content,
      );
      changed.push({ session: row.session_id, id: row.id, speaker: fields.speaker, time: fields.time ?? "" });
    }
    if (changed.length > 0) {
      await run(sql`UPDATE assistant_messages m
SET speaker = coalesce(v.speaker, m.speaker), time_text = coalesce(v.time, m.time_text), search_state = 2
FROM json_to_recordset(${JSON.stringify(changed)}::text::json) AS v(session text, id text, speaker text, time text)
WHERE m.session_id = v.session AND m.id = v.id`);
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < pendingBatchSize) return;
    after = String(last.position);
  }
}

/**
 * Before messages change (text updated, or deleted; `ids` a JSON array as text): they are marked for the
 * next search to write their fields again (an updated text may name another speaker). Their neighbours keep
 * theirs: the turns after a message count at query time. Run it before a delete, in the same transaction.
 */
export function staleSearchFieldsStatement(sessionId: string, ids: string): SqlStatement {
  return sql`UPDATE assistant_messages SET search_state = 0
WHERE session_id = ${sessionId} AND search_state <> 0
  AND id IN (SELECT json_array_elements_text(${ids}::text::json))`;
}
