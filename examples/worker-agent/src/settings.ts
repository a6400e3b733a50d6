/**
 * Small per-agent settings in the Durable Object's SQLite database: whether the knowledge block was seeded,
 * and the date override the demo and the tests use.
 */
export const SETTINGS_TABLE = "worker_agent_settings";

export class AgentSettings {
  private ready = false;

  constructor(private readonly storage: DurableObjectStorage) {}

  get(key: string): string | null {
    this.ensureTable();
    const rows = this.storage.sql
      .exec<{ value: string }>(`SELECT value FROM ${SETTINGS_TABLE} WHERE key = ?`, key)
      .toArray();
    return rows[0]?.value ?? null;
  }

  set(key: string, value: string): void {
    this.ensureTable();
    this.storage.sql.exec(
      `INSERT INTO ${SETTINGS_TABLE} (key, value) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      key,
      value,
    );
  }

  delete(key: string): void {
    this.ensureTable();
    this.storage.sql.exec(`DELETE FROM ${SETTINGS_TABLE} WHERE key = ?`, key);
  }

  private ensureTable(): void {
    if (this.ready) return;
    this.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS ${SETTINGS_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    );
    this.ready = true;
  }
}
