import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FaultFigures } from "./figures.js";

const packageDirectory = fileURLToPath(new URL("..", import.meta.url));

interface JsonReport {
  testResults?: {
    assertionResults?: {
      status?: string;
      failureMessages?: string[];
      meta?: { faultFigures?: FaultFigures };
    }[];
  }[];
}

/**
 * The many-writers scenario (workerd/many-writers.test.ts) run in workerd through vitest-pool-workers, at
 * `scale` ("short": CI's size; "long": more writers and resets), and its figures, read from the test's
 * `meta` in vitest's JSON report. The figures come back even when an invariant broke (the test then
 * failed after writing them).
 */
export function manyWritersOnADurableObject(scale: "short" | "long"): FaultFigures {
  const vitest = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
  const directory = mkdtempSync(join(tmpdir(), "contextblocks-faults-report-"));
  try {
    const report = join(directory, "report.json");
    const child = spawnSync(
      process.execPath,
      [vitest, "run", "--project", "workerd", "--reporter=json", `--outputFile=${report}`],
      {
        cwd: packageDirectory,
        env: { ...process.env, FAULTS_SCALE: scale },
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
        timeout: 30 * 60_000,
        killSignal: "SIGKILL",
      },
    );
    if (child.error !== undefined) throw new Error(`many writers: ${child.error.message}\n${child.stderr}`);
    let parsed: JsonReport;
    try {
      parsed = JSON.parse(readFileSync(report, "utf8")) as JsonReport;
    } catch {
      throw new Error(
        `many writers: no report (exit ${child.status ?? child.signal})\n${child.stdout}\n${child.stderr}`,
      );
    }
    const result = parsed.testResults?.[0]?.assertionResults?.[0];
    if (result?.meta?.faultFigures === undefined) {
      throw new Error(`many writers: no figures: ${result?.failureMessages?.join("\n") ?? "no test result"}`);
    }
    return result.meta.faultFigures;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
