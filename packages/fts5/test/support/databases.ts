import Database from "better-sqlite3";
import { Fts5SearchProvider, type Fts5SearchProviderOptions } from "../../src/index.js";

/** A fresh in-memory better-sqlite3 database. */
export function memoryDatabase(): Database.Database {
  return new Database(":memory:");
}

/** A provider with the given label on a database (a fresh in-memory one by default). */
export function openProvider(
  options: Fts5SearchProviderOptions = {},
  database: Database.Database = memoryDatabase(),
): { provider: Fts5SearchProvider; database: Database.Database } {
  return { provider: new Fts5SearchProvider(database, { label: "knowledge", ...options }), database };
}

/** The keys of a search result, in order (`[key]` lines that start each match). */
export function keysOf(result: string | null): string[] {
  if (result === null) return [];
  return result
    .split("\n\n")
    .map((block) => /^\[(.*)\]$/m.exec(block.split("\n")[0] ?? "")?.[1])
    .filter((key): key is string => key !== undefined);
}
