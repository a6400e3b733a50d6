import { defineConfig } from "vitest/config";

// The inspector page in a real headless Chromium, against `wrangler dev` started by the test (Node).
export default defineConfig({
  test: {
    name: "browser",
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    // Limits for starting wrangler and Chromium on a slow machine, not assertions about speed.
    testTimeout: 90_000,
    hookTimeout: 90_000,
  },
});
