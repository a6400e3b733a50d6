import type { HistoryProvider, RunMessage } from "@contextblocks/ai";
import type Database from "better-sqlite3";

/**
 * The agent's conversation as a history provider: one model message per row of a table in the agent's
 * file, written in one transaction per model call. One conversation per file: the session id is not stored.
 */
export class TranscriptHistoryProvider implements HistoryProvider {
  readonly sourceId = "transcript";
  readonly loadMessages = true;

  constructor(
    private readonly database: Database.Database,
    private readonly table: string,
  ) {
    database.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (id INTEGER PRIMARY KEY AUTOINCREMENT, message TEXT NOT NULL)`,
    );
  }

  async getMessages(): Promise<RunMessage[]> {
    return this.messages();
  }

  async saveMessages(_sessionId: string, messages: readonly RunMessage[]): Promise<void> {
    const insert = this.database.prepare(`INSERT INTO ${this.table} (message) VALUES (?)`);
    this.database.transaction(() => {
      for (const message of messages) insert.run(JSON.stringify(message));
    })();
  }

  /** The stored conversation, oldest first. */
  messages(): RunMessage[] {
    return this.database
      .prepare<[], { message: string }>(`SELECT message FROM ${this.table} ORDER BY id`)
      .all()
      .map((row) => JSON.parse(row.message) as RunMessage);
  }
}
