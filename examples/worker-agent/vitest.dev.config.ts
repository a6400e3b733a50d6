import { defineConfig } from "vitest/config";

// The Worker under a real `wrangler dev` started by the test (Node): behaviour of the HTTP edge that the
// workerd pool does not reproduce (request bodies streamed through wrangler's proxy).
export default defineConfig({
  test: {
    name: "wrangler-dev",
    include: ["test/dev/**/*.test.ts"],
    environment: "node",
    // Limits for starting wrangler on a slow machine and streaming 10 MB, not assertions about speed.
    testTimeout: 90_000,
    hookTimeout: 90_000,
  },
});
