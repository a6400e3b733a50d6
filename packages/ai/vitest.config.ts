import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

export default defineConfig({
  test: {
    ...patientTimeouts,
    include: ["test/**/*.test.ts"],
    typecheck: {
      // Type tests compile user code against the built package (dist/) under plain `strict`.
      enabled: true,
      include: ["test/types/**/*.test-d.ts"],
      tsconfig: "test/types/tsconfig.json",
    },
  },
});
