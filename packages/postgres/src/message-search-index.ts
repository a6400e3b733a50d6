import { parseStoredMessage } from "@contextblocks/sessions";
import { type SqlStatement, sql } from "@contextblocks/sql";
import { messageFieldsOf } from "@contextblocks/text";

/**
 * The search fields of a message that its append does not write (as SQLite's lazy index, message-index.ts
 * there): its speaker, its day (`time_text`, `time_tsv`) and the text of the two turns after it on its branch
 * (`after_text`, `after_tsv`: its first child and that child's first child). A search first brings them up to
 * date for the messages whose `search_state` says they may be behind:
 * - 0: never indexed (a new message, or one whose neighbours changed: update and delete set it);
 * - 1: indexed, but its turns after are not all there yet (the last two turns of a path);
 * - 2: complete.
 * A partial index finds the rows below 2, so the work is the messages appended since the last search and the
 * last two of each path, never the rest of the conversation; a row is written only when its fields change.
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
  after_text: string;
  position: string | number;
  child_text: string | null;
  grandchild_text: string | null;
}

export async function catchUpSearchFields(
  run: (statement: SqlStatement) => Promise<unknown[]>,
  sessionId: string | undefined,
): Promise<void> {
  let after = "0";
  for (;;) {
    const inSession = sessionId === undefined ? sql`` : sql`AND m.session_id = ${sessionId}`;
    const rows = (await run(sql`SELECT m.id, m.session_id, m.role, m.content, m.text_content, m.created_at,
  m.search_state, m.after_text, m.position, child.text_content AS child_text,
  grandchild.text_content AS grandchild_text
FROM assistant_messages m
LEFT JOIN LATERAL (SELECT c.id, c.text_content FROM assistant_messages c
  WHERE c.session_id = m.session_id AND c.parent_id = m.id ORDER BY c.position LIMIT 1) child ON true
LEFT JOIN LATERAL (SELECT g.text_content FROM assistant_messages g
  WHERE g.session_id = m.session_id AND g.parent_id = child.id ORDER BY g.position LIMIT 1) grandchild ON true
WHERE m.search_state < 2 AND m.position > ${after}::bigint ${inSession}
ORDER BY m.position LIMIT ${pendingBatchSize}`)) as PendingRow[];
    const changed: {
      session: string;
      id: string;
      speaker?: string;
      time?: string;
      after: string;
      state: number;
    }[] = [];
    for (const row of rows) {
      const afterText = [row.child_text ?? "", row.grandchild_text ?? ""].join("\n");
      const state = row.grandchild_text === null ? 1 : 2;
      if (Number(row.search_state) === 0) {
        const message = parseStoredMessage(row.content);
        const fields = messageFieldsOf(
          { role: row.role, metadata: message?.metadata, createdAt: message?.createdAt ?? row.created_at },
          row.text_content,
        );
        changed.push({
          session: row.session_id,
          id: row.id,
          speaker: fields.speaker,
          time: fields.time ?? "",
          after: afterText,
          state,
        });
      } else if (afterText !== row.after_text || state !== Number(row.search_state)) {
        changed.push({ session: row.session_id, id: row.id, after: afterText, state });
      }
    }
    if (changed.length > 0) {
      await run(sql`UPDATE assistant_messages m
SET speaker = coalesce(v.speaker, m.speaker), time_text = coalesce(v.time, m.time_text),
  after_text = v.after, search_state = v.state
FROM json_to_recordset(${JSON.stringify(changed)}::text::json)
  AS v(session text, id text, speaker text, time text, after text, state smallint)
WHERE m.session_id = v.session AND m.id = v.id`);
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < pendingBatchSize) return;
    after = String(last.position);
  }
}

/**
 * Before messages change (text updated, or deleted; `ids` a JSON array as text): they, their parents and
 * their grandparents are marked for the next search to index again (the turns after a parent may change).
 * Run it before a delete, in the same transaction.
 */
export function staleSearchFieldsStatement(sessionId: string, ids: string): SqlStatement {
  return sql`WITH changed (id) AS (SELECT json_array_elements_text(${ids}::text::json)),
parents AS (SELECT m.parent_id AS id FROM assistant_messages m JOIN changed c ON m.id = c.id
  WHERE m.session_id = ${sessionId} AND m.parent_id IS NOT NULL),
grandparents AS (SELECT m.parent_id AS id FROM assistant_messages m JOIN parents p ON m.id = p.id
  WHERE m.session_id = ${sessionId} AND m.parent_id IS NOT NULL)
UPDATE assistant_messages SET search_state = 0
WHERE session_id = ${sessionId} AND search_state <> 0
  AND id IN (SELECT id FROM changed UNION SELECT id FROM parents UNION SELECT id FROM grandparents)`;
}
