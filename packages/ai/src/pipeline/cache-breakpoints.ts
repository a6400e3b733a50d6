import type { ModelCallOptions } from "./model-types.js";

/**
 * The prompt-cache breakpoints a model call already carries, and the rules a new one must keep. Verified
 * against Anthropic's prompt-caching guide (platform.claude.com/docs/en/build-with-claude/prompt-caching):
 * - a request holds at most four breakpoints; a top-level `cache_control` (automatic caching, which the AI SDK
 *   sends for the call's `providerOptions.anthropic.cacheControl`) "uses one of the 4 available breakpoint
 *   slots" and lands on the last cacheable block;
 * - the prefix is read in the order tools → system → messages, and "cache entries with longer TTL must appear
 *   before shorter TTLs": a 1-hour breakpoint never follows a 5-minute one.
 * Bedrock's cache points follow the same two rules (AI SDK Bedrock docs: at most four, longer TTLs first).
 */

export type CacheTtl = "5m" | "1h";

/** The most breakpoints one Anthropic or Bedrock request accepts. */
export const MAXIMUM_CACHE_BREAKPOINTS = 4;

/** How one provider spells a breakpoint in `providerOptions`. */
export interface BreakpointSpelling {
  /** The namespace in `providerOptions`: `anthropic`, `bedrock`. */
  namespace: string;
  /** The breakpoint's TTL when `options` of that namespace carry one, else `null`. */
  read(options: Record<string, unknown>): CacheTtl | null;
  /** The options that place a breakpoint of this TTL (`5m` is sent as the provider's default). */
  write(ttl: CacheTtl): Record<string, unknown>;
}

export const anthropicSpelling: BreakpointSpelling = {
  namespace: "anthropic",
  // `@ai-sdk/anthropic` reads either spelling.
  read: (options) => ttlOf(options.cacheControl ?? options.cache_control),
  write: (ttl) => ({ cacheControl: ttl === "1h" ? { type: "ephemeral", ttl } : { type: "ephemeral" } }),
};

export const bedrockSpelling: BreakpointSpelling = {
  namespace: "bedrock",
  read: (options) => ttlOf(options.cachePoint),
  write: (ttl) => ({ cachePoint: ttl === "1h" ? { type: "default", ttl } : { type: "default" } }),
};

function ttlOf(mark: unknown): CacheTtl | null {
  if (mark === undefined || mark === null) return null;
  return (mark as { ttl?: unknown }).ttl === "1h" ? "1h" : "5m";
}

/**
 * Where a breakpoint sits in the order the provider reads the prefix: tool definitions first (-1), then the
 * breakpoints on the parts of message `index` (at `index`), then one on the message itself (at `index + 0.5`:
 * the providers put it on the message's last part). The top-level automatic breakpoint goes on the last block
 * of all: the last message's last part, at `prompt.length - 0.5`.
 */
export interface Breakpoint {
  position: number;
  ttl: CacheTtl;
}

/** The TTL of the `spelling` breakpoint that `providerOptions` carry, or `null` when they carry none. */
export function breakpointTtl(providerOptions: unknown, spelling: BreakpointSpelling): CacheTtl | null {
  const own = (providerOptions as Record<string, unknown> | undefined)?.[spelling.namespace];
  return typeof own === "object" && own !== null ? spelling.read(own as Record<string, unknown>) : null;
}

/** Every breakpoint of `spelling` in the call: on tools, on messages and their parts, and at the top level. */
export function breakpointsOf(params: ModelCallOptions, spelling: BreakpointSpelling): Breakpoint[] {
  const found: Breakpoint[] = [];
  const add = (providerOptions: unknown, position: number) => {
    const ttl = breakpointTtl(providerOptions, spelling);
    if (ttl !== null) found.push({ position, ttl });
  };
  for (const tool of params.tools ?? []) if ("providerOptions" in tool) add(tool.providerOptions, -1);
  params.prompt.forEach((message, index) => {
    if (Array.isArray(message.content)) for (const part of message.content) add(part.providerOptions, index);
    add(message.providerOptions, index + 0.5);
  });
  add(params.providerOptions, params.prompt.length - 0.5);
  return found;
}

/**
 * The TTL a new breakpoint at `position` may have so no 1-hour breakpoint follows a 5-minute one: `wanted`
 * when the order allows it, else the one TTL that fits (1 hour before a later 1-hour breakpoint, 5 minutes
 * after an earlier 5-minute one; a breakpoint on the same block, the automatic one, must have the same TTL),
 * or `null` when the breakpoints around it already break the order.
 */
export function compatibleTtl(
  existing: readonly Breakpoint[],
  position: number,
  wanted: CacheTtl,
): CacheTtl | null {
  const longerAfter = existing.some((mark) => mark.position >= position && mark.ttl === "1h");
  const shorterBefore = existing.some((mark) => mark.position <= position && mark.ttl === "5m");
  if (longerAfter && shorterBefore) return null;
  if (longerAfter) return "1h";
  if (shorterBefore) return "5m";
  return wanted;
}
