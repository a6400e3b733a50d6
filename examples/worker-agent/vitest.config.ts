import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

// The Worker and its Durable Object in workerd, configured from wrangler.jsonc. The offline scripted model
// is forced, whatever OPENAI_API_KEY says. The inspector's browser check is vitest.browser.config.ts.
export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.jsonc" },
      miniflare: { bindings: { AGENT_MODEL: "scripted", INSPECTOR_TOKEN: "test-inspector-token" } },
    }),
  ],
  test: {
    ...patientTimeouts,
    name: "workerd",
    include: ["test/worker/**/*.test.ts"],
  },
});
