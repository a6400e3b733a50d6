import { ContextError } from "@contextblocks/core";
import type { RunContextProvider } from "./run-provider.js";

/** Runs a provider's code; a throw becomes a `PROVIDER_FAILED` error naming the provider and the step. */
export async function guard<T>(
  provider: RunContextProvider,
  step: string,
  action: () => T | Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ContextError(
      "PROVIDER_FAILED",
      `Run provider "${provider.sourceId}" failed in ${step}: ${reason}`,
      {
        cause: error,
      },
    );
  }
}

/** A provider called the run context wrongly. */
export function invalidUse(message: string): ContextError {
  return new ContextError("INVALID_INPUT", message);
}
