import type { ModelMessage } from "ai";

/** The conversation, one AI SDK `ModelMessage` per row, in the Durable Object's SQLite database. */
export const TRANSCRIPT_TABLE = "worker_agent_transcript";

export class Transcript {
  private ready = false;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** Every message so far, oldest first. */
  read(): ModelMessage[] {
    this.ensureTable();
    return this.storage.sql
      .exec<{ message: string }>(`SELECT message FROM ${TRANSCRIPT_TABLE} ORDER BY id`)
      .toArray()
      .map((row) => JSON.parse(row.message) as ModelMessage);
  }

  count(): number {
    this.ensureTable();
    const rows = this.storage.sql.exec<{ count: number }>(
      `SELECT count(*) AS count FROM ${TRANSCRIPT_TABLE}`,
    );
    return rows.one().count;
  }

  /** Appends one turn's messages atomically: a turn is stored whole or not at all. */
  append(messages: readonly ModelMessage[]): void {
    this.ensureTable();
    this.storage.transactionSync(() => {
      for (const message of messages) {
        this.storage.sql.exec(
          `INSERT INTO ${TRANSCRIPT_TABLE} (message) VALUES (?)`,
          JSON.stringify(message),
        );
      }
    });
  }

  private ensureTable(): void {
    if (this.ready) return;
    this.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS ${TRANSCRIPT_TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, message TEXT NOT NULL)`,
    );
    this.ready = true;
  }
}
