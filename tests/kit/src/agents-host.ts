import type Database from "better-sqlite3";

/**
 * An object shaped like an `agents` Agent over better-sqlite3: a synchronous tagged-template `sql`, and
 * `ctx.storage.transactionSync` as a Durable Object has (a transaction of the same database).
 */
export function agentsHost(database: Database.Database) {
  return {
    ctx: {
      storage: {
        transactionSync: <T>(closure: () => T): T => database.transaction(closure)(),
      },
    },
    sql<T = Record<string, string | number | boolean | null>>(
      strings: TemplateStringsArray,
      ...values: (string | number | boolean | null)[]
    ): T[] {
      const text = strings.reduce(
        (query, part, index) => query + part + (index < values.length ? "?" : ""),
        "",
      );
      const statement = database.prepare(text);
      const bound = values.map((value) => (typeof value === "boolean" ? Number(value) : value));
      if (statement.reader) return statement.all(...bound) as T[];
      statement.run(...bound);
      return [];
    },
  };
}
