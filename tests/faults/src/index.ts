/**
 * The fault and soak harness. Each scenario injects faults into real processes and servers and returns
 * its figures (faults injected, survived, what the checks after them found); test/ runs the short
 * version, bench/src/faults.ts the long one.
 */
export { manyWritersOnADurableObject } from "./durable-object-writers.js";
export type { FaultFigures } from "./figures.js";
export {
  type CrashFindings,
  crashedWriter,
  type KilledWriterOptions,
  killedWriter,
} from "./killed-writer.js";
export { type PostgresRestartOptions, postgresRestart } from "./postgres-restart.js";
export { type SlowSubscriberOptions, type SlowSubscriberResult, slowSubscriber } from "./slow-subscriber.js";
export type { TranscriptFindings } from "./transcript-check.js";
export { type WorkerdStoppedOptions, workerdStopped } from "./workerd-stop.js";
