import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// One throwaway PostgreSQL cluster for the run (test/global-setup.ts); each test opens its backends on
// fresh storage (a temporary SQLite file, a new Postgres schema).
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    ...patientTimeouts,
  },
});
