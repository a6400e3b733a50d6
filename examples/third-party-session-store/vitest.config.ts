import { defineConfig } from "vitest/config";

// Explicit limits for a machine with other work on its cores, not assertions about speed.
export default defineConfig({
  test: { include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 120_000 },
});
