import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/**
 * The row-cost benchmark in workerd (not part of any test run of its own: bench/src/row-cost.ts starts it).
 * ROW_COST_ENTRIES sets the index sizes of the search rows.
 */
export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./row-cost/wrangler.jsonc" },
      miniflare: { bindings: { ROW_COST_ENTRIES: process.env.ROW_COST_ENTRIES ?? "1000,10000" } },
    }),
  ],
  test: {
    name: "row-cost",
    include: ["row-cost/**/*.test.ts"],
    testTimeout: 900_000,
  },
});
