/** Node-only helpers for tests (worker threads): not part of the main entry, which also runs in workerd. */
export { type DeadlineRun, runWithinDeadline } from "./deadline.js";
