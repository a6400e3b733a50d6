/** `assistant_messages` as Cloudflare agents' Sessions API creates it on Postgres (none of our columns). */
export const AGENTS_MESSAGES_TABLE = `CREATE TABLE assistant_messages (
  id TEXT NOT NULL, session_id TEXT NOT NULL DEFAULT '', parent_id TEXT, role TEXT NOT NULL,
  content TEXT NOT NULL, text_content TEXT NOT NULL DEFAULT '', created_at TIMESTAMPTZ DEFAULT NOW(),
  content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text_content)) STORED,
  PRIMARY KEY (session_id, id))`;
