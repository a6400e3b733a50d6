import { describeSessionStore } from "@contextblocks/conformance";
import { SqliteSessionStore } from "../../src/index.js";
import { openTemporaryDatabase, type TemporaryDatabase } from "./temporary-database.js";

// Each provider from the factory gets its own database file; other sessions and restarts share it.
const databases = new WeakMap<SqliteSessionStore, TemporaryDatabase>();

describeSessionStore(
  "SqliteSessionStore on better-sqlite3",
  () => {
    const temporary = openTemporaryDatabase();
    const provider = new SqliteSessionStore(temporary.database, "conformance");
    databases.set(provider, temporary);
    return provider;
  },
  {
    capabilities: { search: true, tree: true },
    session: (provider, sessionId) => {
      const temporary = databases.get(provider) as TemporaryDatabase;
      const other = new SqliteSessionStore(temporary.database, sessionId);
      databases.set(other, temporary);
      return other;
    },
    reopen: (provider) => {
      const temporary = databases.get(provider) as TemporaryDatabase;
      const reopened = new SqliteSessionStore(temporary.reopen(), provider.sessionId);
      databases.set(reopened, temporary);
      return reopened;
    },
    cleanup: (provider) => databases.get(provider)?.remove(),
  },
);
