import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

/** A real better-sqlite3 file database in a fresh temporary directory. */
export interface TemporaryDatabase {
  readonly path: string;
  readonly database: Database.Database;
  /** Close the connection and open a new one on the same file. */
  reopen(): Database.Database;
  /** Another connection on the same file, the first left open (closed by `remove`). */
  connect(): Database.Database;
  /** Close and delete the directory. */
  remove(): void;
}

export function openTemporaryDatabase(): TemporaryDatabase {
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-test-"));
  const path = join(directory, "test.sqlite");
  let database = new Database(path);
  const others: Database.Database[] = [];
  return {
    path,
    get database() {
      return database;
    },
    reopen() {
      database.close();
      database = new Database(path);
      return database;
    },
    connect() {
      const other = new Database(path);
      others.push(other);
      return other;
    },
    remove() {
      for (const other of others) if (other.open) other.close();
      if (database.open) database.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
