import { describeSessionStoreV1 } from "@contextblocks/conformance";
import { PostgresSessionStore } from "../src/index.js";
import { type Connection, newStore, openProvider, release, type Store, storeFor } from "./connections.js";

// The storage contract suite (and through the message tree, every group of the session suite) on each way
// of reaching the server. With "two clients" each call alternates between two stores on two connections, so
// the concurrent appends race across connections on the session's pointer row.
const connections: Record<Connection, string> = {
  client: "a pg.Client",
  pool: "a pg.Pool",
  "two clients": "two pg.Clients",
  "postgres.js": "a postgres (porsager) sql instance",
};

for (const [connection, name] of Object.entries(connections) as [Connection, string][]) {
  const open = (store: Store, sessionId: string) =>
    openProvider(store, connection, (source) => new PostgresSessionStore(source, sessionId));

  describeSessionStoreV1<PostgresSessionStore>(
    `PostgresSessionStore on ${name}`,
    async () => open(await newStore(), "conformance"),
    {
      capabilities: { search: true, calibration: true },
      session: (store, sessionId) => open(storeFor(store), sessionId),
      reopen: (store) => open(storeFor(store), store.sessionId),
      cleanup: release,
    },
  );
}
