import type Database from "better-sqlite3";

/**
 * The part of a Durable Object's `ctx.storage` that agents@0.32.0's `agents/sessions` uses (`sql.exec`
 * cursors, `transactionSync`, `get` / `put`), over a better-sqlite3 database: a host for agents' own code in
 * Node, so the database it writes is a real SQLite file. Not a stand-in for contextblocks' storage.
 */
export function durableObjectStorageHost(database: Database.Database) {
  const values = new Map<string, unknown>();
  const exec = (query: string, ...bindings: unknown[]) => {
    // ctx.storage.sql binds ArrayBuffers and typed arrays as blobs; better-sqlite3 binds Buffers.
    const bound = bindings.map((value) => {
      if (typeof value === "boolean") return Number(value);
      if (value instanceof ArrayBuffer) return Buffer.from(value);
      if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      return value;
    });
    let rows: Record<string, unknown>[] = [];
    let rowsWritten = 0;
    let statement: Database.Statement | undefined;
    try {
      statement = database.prepare(query);
    } catch (error) {
      // Several statements in one string (a migration): SQLite runs them in turn, as ctx.storage.sql does.
      if (bound.length > 0 || !/more than one statement/i.test(String(error))) throw error;
      database.exec(query);
    }
    if (statement !== undefined) {
      if (statement.reader) rows = statement.all(...bound) as Record<string, unknown>[];
      else rowsWritten = statement.run(...bound).changes;
    }
    const cursor = {
      rowsRead: rows.length,
      rowsWritten,
      columnNames: rows[0] === undefined ? [] : Object.keys(rows[0]),
      toArray: () => [...rows],
      one: () => {
        if (rows.length !== 1)
          throw new Error(`Expected exactly one result from SQL query, got ${rows.length}`);
        return rows[0];
      },
      raw: function* () {
        for (const row of rows) yield Object.values(row);
      },
      next: (() => {
        let index = 0;
        return () =>
          index < rows.length ? { done: false, value: rows[index++] } : { done: true, value: undefined };
      })(),
      [Symbol.iterator]() {
        return rows[Symbol.iterator]();
      },
    };
    return cursor;
  };
  return {
    sql: {
      exec,
      get databaseSize() {
        return 0;
      },
    },
    transactionSync: <T>(run: () => T): T => database.transaction(run)(),
    get: async (key: string) => values.get(key),
    put: async (key: string, value: unknown) => {
      values.set(key, value);
    },
    delete: async (key: string) => values.delete(key),
  };
}
