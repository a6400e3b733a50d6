/**
 * Published prices the cost model uses, in dollars per million tokens (rows for Durable Objects). Each
 * carries where it is published and when it was read; bench/README.md repeats them in a table. Prices
 * change: update this file and the README table together.
 */

/** How a provider's prompt cache decides what it serves. */
export type CacheRule =
  /** Automatic: the longest prefix shared with a recent request (OpenAI). */
  | "automatic"
  /**
   * Only prefixes ending at a breakpoint (Anthropic `cache_control`, Bedrock `cachePoint`, OpenAI
   * `prompt_cache_breakpoint` on GPT-5.6 and later), writes billed.
   */
  | "breakpoints";

export interface ModelPrice {
  provider: string;
  model: string;
  rule: CacheRule;
  /** Uncached input, $ per million tokens. */
  input: number;
  /** Cached input read, $ per million tokens. */
  cacheRead: number;
  /** Cache write with the default lifetime, $ per million tokens (0: free). */
  cacheWrite: number;
  /** Cache write with the 1-hour lifetime, where offered. */
  cacheWriteOneHour?: number;
  /** The shortest prefix the provider caches, in tokens. */
  minimumPrefix: number;
  source: string;
  /** When the price was read. */
  date: string;
}

export const MODEL_PRICES: readonly ModelPrice[] = [
  {
    provider: "Anthropic",
    model: "Claude Sonnet 4.5",
    rule: "breakpoints",
    input: 3,
    cacheWrite: 3.75,
    cacheWriteOneHour: 6,
    cacheRead: 0.3,
    minimumPrefix: 1_024,
    source: "https://docs.anthropic.com/en/docs/about-claude/pricing (prompt caching table)",
    date: "2026-12-01",
  },
  {
    provider: "OpenAI",
    model: "gpt-5",
    rule: "automatic",
    input: 1.25,
    cacheWrite: 0,
    cacheRead: 0.125,
    minimumPrefix: 1_024,
    source:
      "https://openai.com/api/pricing/ (cached input); https://platform.openai.com/docs/guides/prompt-caching",
    date: "2026-12-01",
  },
  {
    // GPT-5.6 (June 2026): explicit breakpoints, writes billed at 1.25x input, reads at 0.1x, a 30-minute
    // minimum lifetime. Priced with the breakpoint rule at the middleware's breakpoints; OpenAI's own implicit
    // breakpoint on the newest message (its default mode) is not modelled, so the no-hints rows overstate it.
    provider: "OpenAI",
    model: "gpt-5.6-terra",
    rule: "breakpoints",
    input: 2.5,
    cacheWrite: 3.125,
    cacheRead: 0.25,
    minimumPrefix: 1_024,
    source:
      "unverified against openai.com/api/pricing (offline): secondary sources, laxima.tech's GPT-5.6 pricing post " +
      "(Terra $2.50 input, quoting OpenAI's Help Center) and ai-cost-estimator.com (2026-06-27: writes 1.25x, " +
      "reads 0.1x, 30-minute minimum); the breakpoint API from @ai-sdk/openai 4.0.118's docs",
    date: "2026-12-02",
  },
  {
    provider: "Amazon Bedrock",
    model: "Claude Sonnet 4.5 (global endpoint)",
    rule: "breakpoints",
    input: 3,
    cacheWrite: 3.75,
    cacheRead: 0.3,
    minimumPrefix: 1_024,
    source: "https://aws.amazon.com/bedrock/pricing/ (Anthropic, prompt caching)",
    date: "2026-12-01",
  },
];

/** Durable Object SQLite storage: $ per million rows. */
export const DURABLE_OBJECT_ROWS = {
  written: 1,
  read: 0.001,
  source: "https://developers.cloudflare.com/durable-objects/platform/pricing/ (SQLite storage billing)",
  date: "2026-12-01",
} as const;
