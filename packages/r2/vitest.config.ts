import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// Two projects: the SKILL.md importer and front-matter parser in Node, and the provider in workerd against
// the local R2 bucket vitest-pool-workers binds from test/workerd/wrangler.jsonc.
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
