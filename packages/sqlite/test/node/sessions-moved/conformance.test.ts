import { describeSessionProvider } from "@contextblocks/conformance";
import { SqliteSessionProvider } from "../../src/index.js";
import { openTemporaryDatabase, type TemporaryDatabase } from "./temporary-database.js";

// Each provider from the factory gets its own database file; other sessions and restarts share it.
const databases = new WeakMap<SqliteSessionProvider, TemporaryDatabase>();

describeSessionProvider(
  "SqliteSessionProvider on better-sqlite3",
  () => {
    const temporary = openTemporaryDatabase();
    const provider = new SqliteSessionProvider(temporary.database, "conformance");
    databases.set(provider, temporary);
    return provider;
  },
  {
    capabilities: { search: true },
    session: (provider, sessionId) => {
      const temporary = databases.get(provider) as TemporaryDatabase;
      const other = new SqliteSessionProvider(temporary.database, sessionId);
      databases.set(other, temporary);
      return other;
    },
    reopen: (provider) => {
      const temporary = databases.get(provider) as TemporaryDatabase;
      const reopened = new SqliteSessionProvider(temporary.reopen(), provider.sessionId);
      databases.set(reopened, temporary);
      return reopened;
    },
    cleanup: (provider) => databases.get(provider)?.remove(),
  },
);
