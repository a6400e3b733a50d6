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
  // A result's "[key]" line starts the text or follows a blank line; content may itself end in blank lines.
  const lines = result.split("\n");
  return lines.flatMap((line, index) => {
    const key = /^\[(.*)\]$/.exec(line)?.[1];
    return key !== undefined && (index === 0 || lines[index - 1] === "") ? [key] : [];
  });
}
