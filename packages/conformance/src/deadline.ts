/// <reference types="node" />
import { Worker } from "node:worker_threads";

/** What `runWithinDeadline` runs. */
export interface DeadlineRun {
  /** The module to load in the worker, as a `file:` URL (`new URL("./x.ts", import.meta.url).href`). */
  moduleUrl: string;
  /** The exported function to call. */
  exportName: string;
  /** One argument list per call, with a name each for the error message (values are structured-cloned). */
  calls: readonly { name: string; args: unknown[] }[];
  /** How long one call may take before the run fails. Generous: it only has to tell linear from hanging. */
  deadlineMs?: number;
  /**
   * A module URL whose `register()` installs a loader in the worker before the module is loaded, e.g. tsx's
   * `tsx/esm/api` to load TypeScript sources.
   */
  loaderUrl?: string;
}

/**
 * The worker: loads the module (after the loader, if any: the worker's own file could not be TypeScript), then calls the export once per argument list, reporting each start.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  const { moduleUrl, exportName, loaderUrl, calls } = workerData;
  if (loaderUrl) {
    const loader = await import(loaderUrl);
    if (typeof loader.register === "function") loader.register();
  }
  const target = (await import(moduleUrl))[exportName];
  if (typeof target !== "function") throw new Error(moduleUrl + " has no function export " + exportName);
  for (let index = 0; index < calls.length; index++) {
    parentPort.postMessage({ started: index });
    await target(...calls[index]);
  }
  parentPort.postMessage({ finished: true });
})().catch((error) => { throw error; });
`;

const defaultDeadlineMs = 15_000;
/** Loading the module (a TypeScript loader, its imports) gets its own allowance before the first call. */
const startupMs = 60_000;

/**
 * The linear-time guard: runs each call in a worker thread and fails, naming the call, when one does not
 * return within the deadline. A regular expression that backtracks exponentially blocks its thread forever;
 * here the worker is terminated instead, so a regression fails the test rather than hanging CI. This is not
 * a timed assertion: the deadline is orders of magnitude above what a linear implementation needs.
 */
export function runWithinDeadline(run: DeadlineRun): Promise<void> {
  const deadlineMs = run.deadlineMs ?? defaultDeadlineMs;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      moduleUrl: run.moduleUrl,
      exportName: run.exportName,
      loaderUrl: run.loaderUrl,
      calls: run.calls.map((call) => call.args),
    },
  });
  return new Promise<void>((resolve, reject) => {
    let current = -1;
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      reject(error);
    };
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const what =
          current < 0
            ? `loading ${run.moduleUrl}`
            : `${run.exportName}(${run.calls[current]?.name ?? current})`;
        fail(new Error(`${what} did not finish within ${ms} ms: not linear time, or stuck`));
      }, ms);
    };
    arm(startupMs);
    worker.on("message", (message: { started?: number; finished?: boolean }) => {
      if (message.finished) {
        settled = true;
        clearTimeout(timer);
        resolve();
        void worker.terminate();
      } else if (message.started !== undefined) {
        current = message.started;
        arm(deadlineMs);
      }
    });
    worker.on("error", (error) => fail(error));
    worker.on("exit", (code) => {
      if (code !== 0) fail(new Error(`the deadline worker exited with code ${code}`));
    });
  });
}
