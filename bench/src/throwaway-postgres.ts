import { startThrowawayCluster, type ThrowawayCluster } from "@contextblocks/test-kit/postgres";
import pg from "pg";

/** One connected client on a throwaway PostgreSQL cluster (`close` ends both), or why none could be started. */
export type OptionalPostgres = { client: pg.Client; close(): Promise<void> } | { skipped: string };

/**
 * For the benches that also run on Postgres when a server can be started here: a client on a cluster of its
 * own, or the line the bench prints instead of the Postgres rows.
 */
export async function optionalPostgres(): Promise<OptionalPostgres> {
  let cluster: ThrowawayCluster | undefined;
  try {
    cluster = await startThrowawayCluster();
    const started = cluster;
    const client = new pg.Client({ connectionString: started.connectionString });
    await client.connect();
    return {
      client,
      close: async () => {
        await client.end();
        started.stop();
      },
    };
  } catch (error) {
    cluster?.stop();
    return {
      skipped: `Postgres skipped: no server could be started here (${String(error).split("\n")[0]}).`,
    };
  }
}
