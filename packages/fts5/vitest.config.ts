import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...patientTimeouts,
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./test/workerd/wrangler.jsonc" },
            // Row-cost figures: FTS5_ROW_SIZES=1000,10000,100000 FTS5_PRINT_ROWS=1 (see row-cost.test.ts).
            miniflare: {
              bindings: {
                FTS5_ROW_SIZES: process.env.FTS5_ROW_SIZES ?? "",
                FTS5_PRINT_ROWS: process.env.FTS5_PRINT_ROWS ?? "",
              },
            },
          }),
        ],
        test: {
          ...patientTimeouts,
          name: "workerd",
          include: ["test/workerd/**/*.test.ts"],
        },
      },
    ],
  },
});
