import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// Node tests against a real better-sqlite3 database (the SQLite statements). The Postgres statements run
// against a throwaway cluster in @contextblocks/postgres's tests, through its thin wrappers.
export default defineConfig({
  test: { environment: "node", include: ["test/**/*.test.ts"], ...patientTimeouts },
});
