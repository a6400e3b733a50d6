import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    // Limits for starting PostgreSQL and Chromium on a slow machine, not assertions about speed.
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
});
