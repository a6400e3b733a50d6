import { defineConfig } from "vitest/config";

// Node tests against real better-sqlite3 databases written by Cloudflare agents (installed as `agents-session`).
export default defineConfig({
  test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
});
