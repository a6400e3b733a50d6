import { describeSessionStore } from "@contextblocks/conformance";
import { PostgresSessionProvider } from "../src/index.js";
import { type Connection, newStore, openProvider, release, type Store, storeFor } from "./connections.js";

// The session suite on each way of reaching the server. With "two clients" each call alternates between two
// providers on two connections, so the 16 concurrent appends race across connections on the advisory lock.
const connections: Record<Connection, string> = {
  client: "a pg.Client",
  pool: "a pg.Pool",
  "two clients": "two pg.Clients",
  "postgres.js": "a postgres (porsager) sql instance",
};

for (const [connection, name] of Object.entries(connections) as [Connection, string][]) {
  const open = (store: Store, sessionId: string) =>
    openProvider(store, connection, (source) => new PostgresSessionProvider(source, sessionId));

  describeSessionStore<PostgresSessionProvider>(
    `PostgresSessionProvider on ${name}`,
    async () => open(await newStore(), "conformance"),
    {
      capabilities: { search: true, tree: true },
      session: (provider, sessionId) => open(storeFor(provider), sessionId),
      reopen: (provider) => open(storeFor(provider), provider.sessionId),
      cleanup: release,
    },
  );
}
