import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// Two projects: Node tests against real better-sqlite3 databases written by Cloudflare agents (installed as
// `agents-session`), and workerd tests in a Durable Object whose SQLite storage agents wrote.
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
