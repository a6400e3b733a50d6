import { clipped } from "@contextblocks/core/store-kit";

/**
 * An argument the model sent, as an error quotes it: its JSON clipped to 80 characters, or "nothing". A
 * 1 MB argument quoted whole would come back to the model in the tool's answer and fill its context with
 * its own mistake.
 */
export function quotedArgument(value: unknown): string {
  return clipped(JSON.stringify(value) ?? "nothing");
}
