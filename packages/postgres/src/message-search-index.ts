import { type SqlStatement, sql } from "@contextblocks/sql";
import { dayWords } from "@contextblocks/text";
import { searchFieldsOf } from "./message-search-fields.js";

/**
 * The search fields of messages an earlier release stored without them: their speaker and their day
 * (`time_text`, `time_tsv`). An append and an update write them with the message (`search_state` 2); a search
 * first writes them for the rows whose `search_state` is below 2 (a partial index finds them: rows an earlier
 * release appended or updated since its last search, and the rare row whose stored time is outside the years
 * 1000 to 9999; 1 is a row an earlier release left waiting for the turns after it, which are now counted at
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

/** Writes the pending search fields; true when there were any. */
export async function catchUpSearchFields(
  run: (statement: SqlStatement) => Promise<unknown[]>,
  sessionId: string | undefined,
): Promise<boolean> {
  let after = "0";
  let caughtUp = false;
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
      const fields = searchFieldsOf(row.role, row.content, row.text_content);
      const time = fields.time ?? dayWords(row.created_at) ?? "";
      changed.push({ session: row.session_id, id: row.id, speaker: fields.speaker, time });
    }
    if (changed.length > 0) {
      caughtUp = true;
      await run(sql`UPDATE assistant_messages m
SET speaker = coalesce(v.speaker, m.speaker), time_text = coalesce(v.time, m.time_text), search_state = 2
FROM json_to_recordset(${JSON.stringify(changed)}::text::json) AS v(session text, id text, speaker text, time text)
WHERE m.session_id = v.session AND m.id = v.id`);
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < pendingBatchSize) return caughtUp;
    after = String(last.position);
  }
}
