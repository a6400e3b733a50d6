import { createTestSchema, type TestSchema } from "@contextblocks/test-kit/postgres";
import { inject } from "vitest";

export type { TestSchema };

/** The throwaway cluster's connection string (test/global-setup.ts). */
export function postgresUrl(): string {
  return inject("postgresUrl");
}

/** A fresh, empty schema on the run's throwaway cluster. */
export function createSchema(): Promise<TestSchema> {
  return createTestSchema(postgresUrl());
}
