import { describeSessionStore } from "@contextblocks/conformance";
import { type NewSessionLayout, SqliteSessionStore } from "../../src/index.js";
import { openTemporaryDatabase, type TemporaryDatabase } from "./temporary-database.js";

// Each provider from the factory gets its own database file; other sessions and restarts share it.
const databases = new WeakMap<SqliteSessionStore, TemporaryDatabase>();

// Lean is better-sqlite3's default for a new database; keyed is a Durable Object's (asked for here).
for (const layout of ["lean", "keyed"] as NewSessionLayout[]) {
  const open = (database: TemporaryDatabase["database"], sessionId: string) =>
    new SqliteSessionStore(database, { sessionId, newDatabaseLayout: layout });
  describeSessionStore(
    `SqliteSessionStore on better-sqlite3, ${layout} layout`,
    () => {
      const temporary = openTemporaryDatabase();
      const provider = open(temporary.database, "conformance");
      databases.set(provider, temporary);
      return provider;
    },
    {
      capabilities: { search: true, tree: true },
      session: (provider, sessionId) => {
        const temporary = databases.get(provider) as TemporaryDatabase;
        const other = open(temporary.database, sessionId);
        databases.set(other, temporary);
        return other;
      },
      reopen: (provider) => {
        const temporary = databases.get(provider) as TemporaryDatabase;
        const reopened = open(temporary.reopen(), provider.sessionId);
        databases.set(reopened, temporary);
        return reopened;
      },
      cleanup: (provider) => databases.get(provider)?.remove(),
    },
  );
}
