import { defineConfig } from "vitest/config";
import { patientTimeouts } from "../../vitest.timeouts.js";

export default defineConfig({ test: { include: ["test/**/*.test.ts"], ...patientTimeouts } });
