import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// Storage-free: every test runs on the in-memory backend (`@contextblocks/sessions/memory`). The SQLite
// and Postgres stores are tested in their own packages.
export default defineConfig({
  test: { include: ["test/**/*.test.ts"], environment: "node", ...patientTimeouts },
});
