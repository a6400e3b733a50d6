import { defineConfig } from "vitest/config";

// The Worker on Postgres through its Hyperdrive binding (wrangler.postgres.jsonc), under `wrangler dev`
// started by the test (Node) against a throwaway PostgreSQL cluster.
export default defineConfig({
  test: {
    name: "postgres",
    include: ["test/postgres/**/*.test.ts"],
    environment: "node",
    // Limits for starting PostgreSQL and wrangler on a slow machine, not assertions about speed.
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
