import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../vitest.timeouts.js";

// The compatibility tests only; benchmarks are scripts (src/), and the row-cost run has its own config.
export default defineConfig({ test: { include: ["test/**/*.test.ts"], ...patientTimeouts } });
