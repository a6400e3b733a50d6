import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../../vitest.timeouts.js";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The adapter's own test files (packages/ai/test), run with this project's ai 7: `ai` resolves to ai 7 for
 * the tests and the adapter's source alike, and `ai/test` to 7's mocks with `MockLanguageModelV4` in the
 * place of `MockLanguageModelV3` (src/ai-test.ts), so the pipeline runs on the model version 7 speaks.
 */
export default defineConfig({
  root: here("../"),
  resolve: {
    alias: [
      { find: /^ai$/, replacement: here("./node_modules/ai/dist/index.js") },
      { find: /^ai\/test$/, replacement: here("./src/ai-test.ts") },
      { find: /^@ai-sdk\/anthropic$/, replacement: here("./node_modules/@ai-sdk/anthropic/dist/index.js") },
      { find: /^@ai-sdk\/openai$/, replacement: here("./node_modules/@ai-sdk/openai/dist/index.js") },
      {
        find: /^@ai-sdk\/provider-utils$/,
        replacement: here("./node_modules/@ai-sdk/provider-utils/dist/index.js"),
      },
    ],
  },
  test: {
    ...patientTimeouts,
    include: ["test/**/*.test.ts", "test-ai7/test/**/*.test.ts"],
    typecheck: { enabled: false },
  },
});
