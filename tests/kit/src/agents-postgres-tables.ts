/**
 * Cloudflare agents@0.22.0's Postgres tables, as its docs ("Create the tables") have users create them: the
 * session provider's, the context provider's and the search provider's, none of our columns. agents' providers
 * create no tables, so a test of a database agents wrote starts from these.
 */

/** `assistant_messages` as agents' docs create it. */
export const AGENTS_MESSAGES_TABLE = `CREATE TABLE assistant_messages (
  id TEXT NOT NULL, session_id TEXT NOT NULL DEFAULT '', parent_id TEXT, role TEXT NOT NULL,
  content TEXT NOT NULL, text_content TEXT NOT NULL DEFAULT '', created_at TIMESTAMPTZ DEFAULT NOW(),
  content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text_content)) STORED,
  PRIMARY KEY (session_id, id))`;

/** Every table and index of agents' three Postgres providers, each created if it is not there. */
export const AGENTS_POSTGRES_TABLES = [
  AGENTS_MESSAGES_TABLE.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"),
  "CREATE INDEX IF NOT EXISTS idx_assistant_msg_parent ON assistant_messages (parent_id)",
  "CREATE INDEX IF NOT EXISTS idx_assistant_msg_session ON assistant_messages (session_id)",
  "CREATE INDEX IF NOT EXISTS idx_assistant_msg_fts ON assistant_messages USING GIN (content_tsv)",
  `CREATE TABLE IF NOT EXISTS assistant_compactions (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL,
  from_message_id TEXT NOT NULL, to_message_id TEXT NOT NULL, created_at TIMESTAMPTZ DEFAULT NOW())`,
  `CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
  label TEXT PRIMARY KEY, content TEXT NOT NULL, updated_at TIMESTAMPTZ DEFAULT NOW())`,
  `CREATE TABLE IF NOT EXISTS cf_agents_search_entries (
  label TEXT NOT NULL, key TEXT NOT NULL, content TEXT NOT NULL,
  content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  created_at TIMESTAMPTZ DEFAULT NOW(), updated_at TIMESTAMPTZ DEFAULT NOW(), PRIMARY KEY (label, key))`,
  "CREATE INDEX IF NOT EXISTS idx_search_entries_fts ON cf_agents_search_entries USING GIN (content_tsv)",
].join(";\n");
