import { diag } from "@opentelemetry/api";
import { INSTRUMENTATION_NAME } from "./scope.js";

/**
 * `call()`, or `undefined` when it throws: every call into OpenTelemetry goes through it, so a tracer or a
 * span processor that fails never fails (or repeats) the operation it traces. The failure goes to
 * OpenTelemetry's own diagnostic logger (`diag.setLogger`), as the API reports its own errors.
 */
export function quietly<T>(what: string, call: () => T): T | undefined {
  try {
    return call();
  } catch (error) {
    try {
      diag.error(`${INSTRUMENTATION_NAME}: ${what} failed; the operation went on without it`, error);
    } catch {
      // A logger that throws is ignored too.
    }
    return undefined;
  }
}
