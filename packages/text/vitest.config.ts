import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// Node only: the text functions are pure; the tokenizer tests compare them with SQLite's real FTS5
// tokenizer through better-sqlite3 (a devDependency, never a dependency).
export default defineConfig({
  test: { include: ["test/**/*.test.ts"], environment: "node", ...patientTimeouts },
});
