import type Database from "better-sqlite3";

/** The tagged-template `sql` method `agents/context` providers call on their host (an `Agent`). */
export interface TaggedTemplateHost {
  sql<Row = Record<string, unknown>>(strings: TemplateStringsArray, ...values: unknown[]): Row[];
}

/**
 * A stand-in for an `Agent` on better-sqlite3: its `sql` joins the template with `?` placeholders and returns
 * the rows, as `Agent.sql` does over `ctx.storage.sql.exec`. `agents/context` providers take it as their host.
 */
export function betterSqlite3Host(database: Database.Database): TaggedTemplateHost {
  const statements = new Map<string, Database.Statement>();
  return {
    sql<Row>(strings: TemplateStringsArray, ...values: unknown[]): Row[] {
      const query = strings.reduce(
        (text, part, index) => text + part + (index < values.length ? "?" : ""),
        "",
      );
      let statement = statements.get(query);
      if (statement === undefined) {
        statement = database.prepare(query);
        statements.set(query, statement);
      }
      if (statement.reader) return statement.all(...values) as Row[];
      statement.run(...values);
      return [];
    },
  };
}
