import { ContextError } from "@contextblocks/core";
import { errorMessage } from "@contextblocks/core/store-kit";
import type { ContextPlugin } from "./plugin.js";

/** Runs a plugin's code; a throw becomes a `PLUGIN_FAILED` error naming the plugin and the step. */
export async function guard<T>(
  plugin: ContextPlugin,
  step: string,
  action: () => T | Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    const reason = errorMessage(error);
    throw new ContextError("PLUGIN_FAILED", `Plugin "${plugin.sourceId}" failed in ${step}: ${reason}`, {
      cause: error,
    });
  }
}

/** A plugin called the run context wrongly. */
export function invalidUse(message: string): ContextError {
  return new ContextError("INVALID_INPUT", message);
}
