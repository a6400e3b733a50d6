/** The exact statements agents/context (`AgentContextProvider`) runs, for compatibility checks. */
export const AGENTS_CREATE = `CREATE TABLE IF NOT EXISTS cf_agents_context_blocks (
        label TEXT PRIMARY KEY,
        content TEXT NOT NULL,
        updated_at DATETIME DEFAULT CURRENT_TIMESTAMP
      )`;
export const AGENTS_SELECT = "SELECT content FROM cf_agents_context_blocks WHERE label = ?";
export const AGENTS_UPSERT = `INSERT INTO cf_agents_context_blocks (label, content)
      VALUES (?, ?)
      ON CONFLICT(label) DO UPDATE SET content = ?, updated_at = CURRENT_TIMESTAMP`;
