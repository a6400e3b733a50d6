import { describeContextProvider } from "@contextblocks/conformance";
import Database from "better-sqlite3";
import { Fts5SearchProvider } from "../../src/index.js";

/** Each provider's database, so `reopen` and `namespace` can open another provider on the same one. */
const databases = new WeakMap<Fts5SearchProvider, Database.Database>();

function open(database: Database.Database, namespace?: string): Fts5SearchProvider {
  const provider = new Fts5SearchProvider(database, { namespace });
  databases.set(provider, database);
  return provider;
}

function databaseOf(provider: Fts5SearchProvider): Database.Database {
  const database = databases.get(provider);
  if (database === undefined) throw new Error("a provider this test did not open");
  return database;
}

describeContextProvider("Fts5SearchProvider on better-sqlite3", () => open(new Database(":memory:")), {
  capabilities: { searchable: true, writable: true, delete: true, namespacing: true },
  reopen: (provider) => open(databaseOf(provider), provider.namespace),
  namespace: (provider, namespace) => open(databaseOf(provider), namespace),
});
