import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { compiledProcess } from "./compiled-processes.js";
import { type FaultFigures, FaultTally } from "./figures.js";
import type { SubscriberOptions, SubscriberReport } from "./subscriber-process.js";

/** Options of `slowSubscriber`. */
export interface SlowSubscriberOptions {
  /** Messages appended while the subscriber does not read. */
  appends: number;
  /** Size of each (its text, in bytes). Default 1 MiB. */
  messageBytes?: number;
  /** The most memory a subscriber may hold for the fault to count as survived. Default 8 MiB. */
  boundBytes?: number;
}

/** What `slowSubscriber` measured, beside its figures. */
export interface SlowSubscriberResult {
  figures: FaultFigures;
  /** Memory the appends left behind with a subscriber that never reads, less what they leave with none. */
  heldBySubscriber: number;
  /** The same once its stream was cancelled. */
  heldAfterCancel: number;
}

const packageDirectory = fileURLToPath(new URL("..", import.meta.url));

/**
 * A slow inspector subscriber: one `GET /events` of `@contextblocks/inspector` whose body is never read,
 * while a session takes `appends` messages of 1 MiB. Each run is a fresh process with a full garbage
 * collection before each reading; the memory it holds is the difference from the same appends with no
 * subscriber. The fault survived when every message was stored and the subscriber held at most
 * `boundBytes` (a Durable Object has 128 MB in all).
 */
export async function slowSubscriber(options: SlowSubscriberOptions): Promise<SlowSubscriberResult> {
  const messageBytes = options.messageBytes ?? 1024 * 1024;
  const boundBytes = options.boundBytes ?? 8 * 1024 * 1024;
  const tally = new FaultTally(`Inspector subscriber that never reads (${options.appends} appends of 1 MiB)`);
  const alone = await measure({ appends: options.appends, messageBytes, subscriber: "none" });
  const stalled = await measure({ appends: options.appends, messageBytes, subscriber: "never-reads" });
  tally.fault();
  tally.acknowledge(Array.from({ length: options.appends }, (_, index) => `large-${index}`));
  const heldBySubscriber = Math.max(0, stalled.heldAfterAppends - alone.heldAfterAppends);
  const heldAfterCancel = Math.max(0, (stalled.heldAfterCancel ?? 0) - alone.heldAfterAppends);
  tally.memory(heldBySubscriber);
  const problems = [alone.storageProblem, stalled.storageProblem].filter((problem) => problem !== null);
  for (const problem of problems) tally.example(`storage: ${problem}`);
  if (heldBySubscriber > boundBytes) {
    tally.example(
      `the subscriber held ${(heldBySubscriber / 2 ** 20).toFixed(1)} MiB after ${options.appends} appends (bound ${(boundBytes / 2 ** 20).toFixed(0)} MiB); ${(heldAfterCancel / 2 ** 20).toFixed(1)} MiB once its stream was cancelled`,
    );
  }
  if (problems.length === 0 && heldBySubscriber <= boundBytes) tally.survive();
  return { figures: tally.figures(), heldBySubscriber, heldAfterCancel };
}

function measure(options: SubscriberOptions): Promise<SubscriberReport> {
  return new Promise((resolve, reject) => {
    const child = fork(compiledProcess("subscriber-process.ts"), [JSON.stringify(options)], {
      cwd: packageDirectory,
      execArgv: ["--expose-gc"],
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    let errors = "";
    let report: SubscriberReport | undefined;
    child.stderr?.on("data", (chunk: Buffer) => {
      errors += chunk.toString();
    });
    child.on("message", (message: SubscriberReport) => {
      report = message;
    });
    child.once("close", (code) => {
      if (report !== undefined) resolve(report);
      else reject(new Error(`the subscriber process failed (exit ${code}):\n${errors}`));
    });
  });
}
