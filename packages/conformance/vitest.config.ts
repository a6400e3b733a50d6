import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

export default defineConfig({
  test: {
    ...patientTimeouts,
    include: ["test/**/*.test.ts"],
    environment: "node",
  },
});
