import { describeSessionBackend } from "@contextblocks/conformance";
import { openTemporaryDatabase, type TemporaryDatabase } from "@contextblocks/test-kit/sqlite";
import { type SqliteBackend, sqliteBackend } from "../../src/index.js";

// The registry, run-state and whole-backend suites on better-sqlite3 file databases.
const databases = new WeakMap<SqliteBackend, TemporaryDatabase>();

describeSessionBackend(
  "sqliteBackend (better-sqlite3)",
  () => {
    const temporary = openTemporaryDatabase();
    const backend = sqliteBackend(temporary.database);
    databases.set(backend, temporary);
    return backend;
  },
  { cleanup: (backend) => databases.get(backend)?.remove() },
);
