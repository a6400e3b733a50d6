import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// Two projects: Node tests against a real better-sqlite3 file database, and workerd tests against a
// Durable Object with SQLite storage (vitest-pool-workers).
export default defineConfig({
  test: {
    projects: [
      {
        test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node", ...patientTimeouts },
      },
      {
        plugins: [cloudflareTest({ wrangler: { configPath: "./test/workerd/wrangler.jsonc" } })],
        test: { name: "workerd", include: ["test/workerd/**/*.test.ts"], ...patientTimeouts },
      },
    ],
  },
});
