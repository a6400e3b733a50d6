import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every vitest run in the workspace sets its own limits: a test that leans on vitest's 5 s default passes on an
 * idle machine and fails with other work on both cores (the README's test command must pass there too).
 */
const root = resolve(import.meta.dirname, "../../..");
const minimumTimeout = 30_000;

interface TestOptions {
  testTimeout?: number;
  hookTimeout?: number;
  projects?: unknown[];
}

/** Each workspace folder's vitest config files, as its `test` script runs them. */
function vitestRuns(): string[] {
  const folders = ["packages", "examples", "tests"].flatMap((parent) =>
    readdirSync(join(root, parent)).map((name) => join(root, parent, name)),
  );
  folders.push(join(root, "bench"));
  const configs: string[] = [];
  for (const folder of folders) {
    const manifestPath = join(folder, "package.json");
    if (!existsSync(manifestPath)) continue;
    const script: unknown = JSON.parse(readFileSync(manifestPath, "utf8")).scripts?.test;
    if (typeof script !== "string") continue;
    for (const run of script.split("&&").filter((part) => part.includes("vitest run"))) {
      const named = /--config\s+(\S+)/.exec(run)?.[1];
      configs.push(join(folder, named ?? "vitest.config.ts"));
    }
  }
  return configs;
}

/** The test options of a config and of each inline project (projects inherit nothing by default). */
function testOptionSets(test: TestOptions): TestOptions[] {
  if (!Array.isArray(test.projects)) return [test];
  return test.projects.map((project) => (project as { test?: TestOptions }).test ?? {});
}

describe("every vitest run sets explicit, generous timeouts", () => {
  const configs = vitestRuns();

  it("finds the workspace's test runs", () => {
    expect(configs.length).toBeGreaterThan(10);
  });

  it.each(configs.map((config) => config.slice(root.length + 1)))("%s", async (relative) => {
    const file = join(root, relative);
    expect(existsSync(file), `${relative} is missing (its package's test script runs it)`).toBe(true);
    const loaded = (await import(pathToFileURL(file).href)) as { default: { test?: TestOptions } };
    for (const options of testOptionSets(loaded.default.test ?? {})) {
      expect(options.testTimeout ?? 0).toBeGreaterThanOrEqual(minimumTimeout);
      expect(options.hookTimeout ?? 0).toBeGreaterThanOrEqual(minimumTimeout);
    }
  });
});
