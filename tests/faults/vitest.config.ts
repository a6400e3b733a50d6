import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// The short version of every scenario (the long one is bench/src/faults.ts): Node scenarios that start and
// kill real processes and servers, and the many-writers scenario in workerd (vitest-pool-workers). Counts
// are small; a test starts and kills many processes, so it gets longer than the workspace's 60 s.
const faultTimeouts = { ...patientTimeouts, testTimeout: 240_000, hookTimeout: 240_000 };

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: "node", include: ["test/**/*.test.ts"], environment: "node", ...faultTimeouts },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./workerd/wrangler.jsonc" },
            miniflare: { bindings: { FAULTS_SCALE: process.env.FAULTS_SCALE ?? "short" } },
          }),
        ],
        test: { name: "workerd", include: ["workerd/**/*.test.ts"], ...faultTimeouts },
      },
    ],
  },
});
