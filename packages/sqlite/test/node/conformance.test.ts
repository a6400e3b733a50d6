import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeContextProvider, describeVersions } from "@contextblocks/conformance";
import Database from "better-sqlite3";
import { SqliteContextProvider } from "../../src/index.js";

/** One backing store: a SQLite file in its own temporary directory, and every connection opened on it. */
interface FileStore {
  readonly directory: string;
  readonly path: string;
  readonly connections: Database.Database[];
  live: number;
  /** Versions kept (the `versions` option's retention); the default 50 when absent. */
  readonly retention?: number;
}

const storeOf = new WeakMap<SqliteContextProvider, FileStore>();

/** A provider on a new connection to the store's file (reopening is a real restart of the connection). */
function openOn(store: FileStore, namespace: string | undefined): SqliteContextProvider {
  const connection = new Database(store.path);
  store.connections.push(connection);
  store.live += 1;
  const versions = store.retention === undefined ? true : { retention: store.retention };
  const provider = new SqliteContextProvider(connection, { namespace, versions });
  storeOf.set(provider, store);
  return provider;
}

function store(provider: SqliteContextProvider): FileStore {
  const found = storeOf.get(provider);
  if (found === undefined) throw new Error("conformance: a provider this test file did not make");
  return found;
}

function release(provider: SqliteContextProvider): void {
  const backing = store(provider);
  backing.live -= 1;
  if (backing.live > 0) return;
  for (const connection of backing.connections) connection.close();
  rmSync(backing.directory, { recursive: true, force: true });
}

function freshStore(retention?: number): FileStore {
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-sqlite-conformance-"));
  const path = join(directory, "blocks.sqlite");
  return retention === undefined
    ? { directory, path, connections: [], live: 0 }
    : { directory, path, connections: [], live: 0, retention };
}

describeContextProvider(
  "SqliteContextProvider on a better-sqlite3 file",
  () => openOn(freshStore(), undefined),
  {
    capabilities: { readable: true, writable: true, namespacing: true, versions: true },
    reopen: (provider) => openOn(store(provider), provider.namespace),
    namespace: (provider, namespace) => openOn(store(provider), namespace),
    cleanup: release,
  },
);

describeVersions(
  "SqliteContextProvider on a better-sqlite3 file, keeping 3 versions",
  () => openOn(freshStore(3), undefined),
  {
    capabilities: { writable: true, versions: true },
    reopen: (provider) => openOn(store(provider), provider.namespace),
    cleanup: release,
    versionRetention: 3,
  },
);
