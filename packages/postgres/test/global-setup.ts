import { startThrowawayCluster } from "@contextblocks/test-kit/postgres";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

/**
 * Starts the throwaway cluster the tests run against and stops it after. When it cannot start, the run
 * fails here with the reason (never skipped): the Postgres providers are only tested against a real server.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const cluster = await startThrowawayCluster();
  project.provide("postgresUrl", cluster.connectionString);
  return () => cluster.stop();
}
