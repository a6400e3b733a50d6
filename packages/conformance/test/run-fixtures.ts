import { fileURLToPath } from "node:url";
import { createVitest } from "vitest/node";
import { patientTimeouts } from "../../../vitest.timeouts.js";

/** One fixture provider's outcome: test names under its top-level describe, by result. */
export interface ProviderOutcome {
  passed: string[];
  failed: string[];
  skipped: string[];
}

/** Outcomes by fixture file name (without `.fixture.ts`), then by the provider's describe name. */
export type FixtureOutcomes = Map<string, Map<string, ProviderOutcome>>;

const packageRoot = fileURLToPath(new URL("..", import.meta.url));

/**
 * Runs the suite on the fixture files (each registers it for one or more providers) in a separate,
 * silent vitest instance, and returns what passed, failed and was skipped.
 */
export async function runFixtures(
  include: string[] = ["test/fixtures/**/*.fixture.ts"],
): Promise<{ outcomes: FixtureOutcomes; errors: unknown[] }> {
  const exitCode = process.exitCode;
  const vitest = await createVitest(
    "test",
    {
      root: packageRoot,
      config: false,
      watch: false,
      include,
      reporters: [{}],
      silent: true,
      // `config: false` drops the package's limits: without them each fixture test would get vitest's 5 s,
      // which the 3 MiB round trip passed on a loaded machine.
      ...patientTimeouts,
    },
    { logLevel: "silent" },
  );
  try {
    const result = await vitest.start();
    const outcomes: FixtureOutcomes = new Map();
    const errors: unknown[] = [...result.unhandledErrors];
    for (const module of result.testModules) {
      errors.push(...module.errors());
      const file = module.moduleId.replace(/^.*\//, "").replace(/\.[a-z]+\.ts$/, "");
      const providers = new Map<string, ProviderOutcome>();
      for (const test of module.children.allTests()) {
        const [provider = "", ...path] = test.fullName.split(" > ");
        let outcome = providers.get(provider);
        if (!outcome) {
          outcome = { passed: [], failed: [], skipped: [] };
          providers.set(provider, outcome);
        }
        const state = test.result().state;
        const name = path.join(" > ");
        if (state === "passed") outcome.passed.push(name);
        else if (state === "failed") outcome.failed.push(name);
        else outcome.skipped.push(name);
      }
      outcomes.set(file, providers);
    }
    return { outcomes, errors };
  } finally {
    await vitest.close();
    // A failing nested run sets the exit code; the failures are expected here.
    process.exitCode = exitCode;
  }
}
