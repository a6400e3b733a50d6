import { describeSessionStoreV1 } from "@contextblocks/conformance";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import type Database from "better-sqlite3";
import { SqliteSessionStore } from "../../src/index.js";

// Each store from the factory gets its own database file; other sessions and restarts share it.
const databases = new WeakMap<SqliteSessionStore, TemporaryDatabase>();

/** The tables as agents@0.22.0 created them: the store keeps the indexed layout on them. */
const agentsTables = `CREATE TABLE assistant_messages (id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL DEFAULT '', parent_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL,
  created_at DATETIME DEFAULT CURRENT_TIMESTAMP);
CREATE INDEX idx_assistant_msg_parent ON assistant_messages(parent_id);
CREATE INDEX idx_assistant_msg_session ON assistant_messages(session_id);`;

// Lean is better-sqlite3's default for a new database, keyed a Durable Object's (asked for here), indexed
// what a database agents@0.22.0 created keeps.
for (const layout of ["lean", "keyed", "indexed"] as const) {
  const open = (database: Database.Database, sessionId: string) =>
    new SqliteSessionStore(database, { sessionId, newDatabaseLayout: layout === "keyed" ? "keyed" : "lean" });
  describeSessionStoreV1(
    `SqliteSessionStore on better-sqlite3, ${layout} layout`,
    () => {
      const temporary = openTemporaryDatabase();
      if (layout === "indexed") temporary.database.exec(agentsTables);
      const store = open(temporary.database, "conformance");
      databases.set(store, temporary);
      return store;
    },
    {
      capabilities: { search: true, calibration: true, pathTotals: true },
      session: (store, sessionId) => {
        const temporary = databases.get(store) as TemporaryDatabase;
        const other = open(temporary.database, sessionId);
        databases.set(other, temporary);
        return other;
      },
      reopen: (store) => {
        const temporary = databases.get(store) as TemporaryDatabase;
        // A new connection, as after a restart; the first stays open (the check reads both).
        const reopened = open(temporary.connect(), store.sessionId);
        databases.set(reopened, temporary);
        return reopened;
      },
      cleanup: (store) => databases.get(store)?.remove(),
    },
  );
}
