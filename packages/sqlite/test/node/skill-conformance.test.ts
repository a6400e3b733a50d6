import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeContextProvider } from "@contextblocks/conformance";
import Database from "better-sqlite3";
import { SqliteSkillProvider } from "../../src/index.js";

/** One backing store: a SQLite file in its own temporary directory, and every connection opened on it. */
interface FileStore {
  readonly directory: string;
  readonly path: string;
  readonly connections: Database.Database[];
  live: number;
}

const storeOf = new WeakMap<SqliteSkillProvider, FileStore>();

/** A provider on a new connection to the store's file (reopening is a real restart of the connection). */
function openOn(store: FileStore, namespace: string | undefined): SqliteSkillProvider {
  const connection = new Database(store.path);
  store.connections.push(connection);
  store.live += 1;
  const provider = new SqliteSkillProvider(connection, { namespace, versions: { retention: 3 } });
  storeOf.set(provider, store);
  return provider;
}

function store(provider: SqliteSkillProvider): FileStore {
  const found = storeOf.get(provider);
  if (found === undefined) throw new Error("conformance: a provider this test file did not make");
  return found;
}

describeContextProvider(
  "SqliteSkillProvider on a better-sqlite3 file",
  () => {
    const directory = mkdtempSync(join(tmpdir(), "contextblocks-skills-conformance-"));
    return openOn({ directory, path: join(directory, "skills.sqlite"), connections: [], live: 0 }, undefined);
  },
  {
    capabilities: {
      readable: true,
      writable: true,
      loadable: true,
      delete: true,
      namespacing: true,
      versions: true,
    },
    versionRetention: 3,
    reopen: (provider) => openOn(store(provider), provider.namespace),
    namespace: (provider, namespace) => openOn(store(provider), namespace),
    cleanup: (provider) => {
      const backing = store(provider);
      backing.live -= 1;
      if (backing.live > 0) return;
      for (const connection of backing.connections) connection.close();
      rmSync(backing.directory, { recursive: true, force: true });
    },
  },
);
