import { PostgresSessionStore } from "@contextblocks/postgres";
import type { SessionStoreV1 } from "@contextblocks/sessions/store-kit";
import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import pg from "pg";

/** A client on a throwaway PostgreSQL cluster, or why there is none; `close` ends both (or does nothing). */
export interface OptionalPostgres {
  client: pg.Client | undefined;
  /** The line a bench prints in place of its Postgres rows when no server could be started ("" otherwise). */
  skipped: string;
  close(): Promise<void>;
}

/**
 * For the benches that also run on Postgres when a server can be started here (and when `wanted`): a client on
 * a cluster of its own, or the line saying why Postgres was skipped.
 */
export async function optionalPostgres(wanted: boolean): Promise<OptionalPostgres> {
  const none = { client: undefined, close: async () => {} };
  if (!wanted) return { ...none, skipped: "" };
  let cluster: ThrowawayCluster | undefined;
  try {
    cluster = await startThrowawayCluster();
    const started = cluster;
    const client = new pg.Client({ connectionString: started.connectionString });
    await client.connect();
    const close = async () => {
      await client.end();
      started.stop();
    };
    return { client, skipped: "", close };
  } catch (error) {
    cluster?.stop();
    return {
      ...none,
      skipped: `Postgres skipped: no server could be started here (${String(error).split("\n")[0]}).`,
    };
  }
}

/** A backend a LoCoMo session bench runs its questions on: a store per session (conversation). */
export interface SessionStoreBackend {
  name: string;
  store(sessionId: string): SessionStoreV1;
}

/** The Postgres backend on the client `optionalPostgres` gave, or none when it was skipped. */
export function postgresSessionBackends(postgres: OptionalPostgres): SessionStoreBackend[] {
  const client = postgres.client;
  if (client === undefined) return [];
  return [{ name: "Postgres", store: (sessionId) => new PostgresSessionStore(client, { sessionId }) }];
}
