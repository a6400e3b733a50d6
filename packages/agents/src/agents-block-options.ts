import type { SessionContextOptions } from "@contextblocks/sessions/store-kit";

/**
 * A block declared through the drop-in keeps agents' default: a change waits for a refresh
 * (`whenChanged: "wait"`) unless the caller says otherwise; contextblocks' own builder reminds instead.
 */
export function agentsBlockOptions(options: SessionContextOptions | undefined): SessionContextOptions {
  return { ...options, whenChanged: options?.whenChanged ?? "wait" };
}
