import { performance } from "node:perf_hooks";

/** The median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error("median of an empty list");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface TimingOptions {
  /** Independent runs; the median of their per-operation times is reported. */
  runs: number;
  /** Operations per run; a run's time is divided by this. */
  iterations: number;
  /** Runs before `prepare` of each measured run, outside the clock. */
  warmup?: number;
}

/**
 * Median time of one operation, in milliseconds. Each run calls `prepare()` (untimed) and then `operation(i)`
 * `iterations` times in a row under the clock.
 */
export async function timeOperation(
  options: TimingOptions,
  operation: (iteration: number) => unknown | Promise<unknown>,
  prepare: () => unknown | Promise<unknown> = () => undefined,
): Promise<number> {
  const perOperation: number[] = [];
  let counter = 0;
  for (let run = 0; run < (options.warmup ?? 1) + options.runs; run += 1) {
    await prepare();
    const start = performance.now();
    for (let iteration = 0; iteration < options.iterations; iteration += 1) {
      await operation(counter);
      counter += 1;
    }
    const elapsed = performance.now() - start;
    if (run >= (options.warmup ?? 1)) perOperation.push(elapsed / options.iterations);
  }
  return median(perOperation);
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** The sample standard deviation (n - 1), 0 for fewer than two values: the spread over folds. */
export function sampleStandardDeviation(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const average = mean(values);
  return Math.sqrt(values.reduce((sum, value) => sum + (value - average) ** 2, 0) / (values.length - 1));
}
