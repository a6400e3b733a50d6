import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// The Worker and its Durable Object in workerd, configured from wrangler.jsonc; no OPENAI_API_KEY, so the
// offline echo model answers. In this monorepo only, `ai` is pinned to this example's AI SDK 7 (the
// adapter's own folder holds 6 for its tests), as wrangler.jsonc's alias does for `wrangler dev`.
export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.jsonc" } })],
  resolve: {
    alias: [
      {
        find: /^ai$/,
        replacement: fileURLToPath(new URL("./node_modules/ai/dist/index.js", import.meta.url)),
      },
    ],
  },
  test: { ...patientTimeouts, include: ["test/**/*.test.ts"] },
});
