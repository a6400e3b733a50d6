import { describeContextProvider, describeVersions } from "@contextblocks/conformance";
import { PostgresContextProvider, PostgresSearchProvider, PostgresSkillProvider } from "../src/index.js";
import { type Connection, newStore, openProvider, release, type Store, storeFor } from "./connections.js";

// Each provider runs the whole suite four ways: on one pg.Client (the form Cloudflare agents' Sessions API shows), on a pg.Pool, as two
// providers on two connections taking calls in turn (so the concurrent checks race across connections), and
// on the postgres (porsager) driver.
const connections: Record<Connection, string> = {
  client: "a pg.Client",
  pool: "a pg.Pool",
  "two clients": "two pg.Clients",
  "postgres.js": "a postgres (porsager) sql instance",
};

for (const [connection, name] of Object.entries(connections) as [Connection, string][]) {
  const openContext = (store: Store, namespace: string | undefined, retention?: number) =>
    openProvider(
      store,
      connection,
      (source) =>
        new PostgresContextProvider(source, {
          namespace,
          versions: retention === undefined ? true : { retention },
        }),
    );

  describeContextProvider<PostgresContextProvider>(
    `PostgresContextProvider on ${name}`,
    async () => openContext(await newStore(), undefined),
    {
      capabilities: { readable: true, writable: true, namespacing: true, versions: true },
      reopen: (provider) => openContext(storeFor(provider), provider.namespace),
      namespace: (provider, namespace) => openContext(storeFor(provider), namespace),
      cleanup: release,
    },
  );

  describeVersions<PostgresContextProvider>(
    `PostgresContextProvider on ${name}, keeping 3 versions`,
    async () => openContext(await newStore(), undefined, 3),
    {
      capabilities: { writable: true, versions: true },
      reopen: (provider) => openContext(storeFor(provider), provider.namespace, 3),
      cleanup: release,
      versionRetention: 3,
    },
  );

  const openSearch = (store: Store, namespace: string | undefined) =>
    openProvider(store, connection, (source) => new PostgresSearchProvider(source, { namespace }));

  describeContextProvider<PostgresSearchProvider>(
    `PostgresSearchProvider on ${name}`,
    async () => openSearch(await newStore(), undefined),
    {
      capabilities: { readable: true, writable: true, searchable: true, delete: true, namespacing: true },
      reopen: (provider) => openSearch(storeFor(provider), provider.namespace),
      namespace: (provider, namespace) => openSearch(storeFor(provider), namespace),
      cleanup: release,
    },
  );

  const openSkills = (store: Store, namespace: string | undefined) =>
    openProvider(
      store,
      connection,
      (source) => new PostgresSkillProvider(source, { namespace, versions: { retention: 3 } }),
    );

  describeContextProvider<PostgresSkillProvider>(
    `PostgresSkillProvider on ${name}`,
    async () => openSkills(await newStore(), undefined),
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
      reopen: (provider) => openSkills(storeFor(provider), provider.namespace),
      namespace: (provider, namespace) => openSkills(storeFor(provider), namespace),
      cleanup: release,
    },
  );
}
