import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { startThrowawayCluster } from "./throwaway-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's throwaway cluster (`inject("postgresUrl")` in a test). */
    postgresUrl: string;
  }
}

/**
 * A vitest global setup's body: starts the throwaway cluster the run's tests share and provides its
 * connection string as `postgresUrl`; returns the teardown. When the server cannot start, the run fails
 * here with the reason (never skipped): Postgres code is only tested against a real server.
 */
export async function provideThrowawayCluster(project: TestProject): Promise<() => void> {
  const cluster = await startThrowawayCluster();
  project.provide("postgresUrl", cluster.connectionString);
  return () => cluster.stop();
}
