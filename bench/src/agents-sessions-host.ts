import { Sessions } from "agents/sessions";
import type Database from "better-sqlite3";

/**
 * agents@0.32.0's `Sessions` capability (`agents/sessions`) on better-sqlite3, for timing beside our store:
 * it reads a Durable Object's `ctx.storage` (`sql.exec(query, ...params)`, `transactionSync`, `get`/`put`),
 * so this gives it that surface over a better-sqlite3 database, as `Lifecycle` would give it its object's
 * storage. Rows-read and rows-written figures are not billed here (see sessions-row-cost.ts for those).
 */
export function agentsSessionsOn(database: Database.Database): Sessions {
  const statements = new Map<string, Database.Statement>();
  const bind = (values: unknown[]) =>
    values.map((value) =>
      value === undefined ? null : typeof value === "boolean" ? (value ? 1 : 0) : value,
    );
  const kv = new Map<string, unknown>();
  const storage = {
    sql: {
      exec(query: string, ...params: unknown[]) {
        let statement = statements.get(query);
        if (statement === undefined) {
          statement = database.prepare(query);
          statements.set(query, statement);
        }
        if (statement.reader) {
          const rows = statement.all(...bind(params)) as Record<string, unknown>[];
          return Object.assign(rows[Symbol.iterator](), { rowsRead: 0, rowsWritten: 0, toArray: () => rows });
        }
        const result = statement.run(...bind(params));
        const rows: Record<string, unknown>[] = [];
        return Object.assign(rows[Symbol.iterator](), {
          rowsRead: 0,
          rowsWritten: result.changes,
          toArray: () => rows,
        });
      },
    },
    transactionSync: <T>(fn: () => T): T => database.transaction(fn)(),
    get: async (key: string) => kv.get(key),
    put: async (key: string, value: unknown) => {
      kv.set(key, value);
    },
  };
  class HostedSessions extends Sessions {
    override get lifecycleServices(): never {
      return { storage, events: { emit: () => undefined }, ready: async () => undefined } as never;
    }
  }
  return new HostedSessions();
}
