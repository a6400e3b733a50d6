import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// One throwaway PostgreSQL cluster for the whole run (test/global-setup.ts); each test file works in its
// own schemas on it (test/database.ts).
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    ...patientTimeouts,
  },
});
