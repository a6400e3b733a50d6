import { describe, expect, it } from "vitest";
import { MODEL_PRICES } from "../src/cost-model/prices.js";
import { priceSession } from "../src/cost-model.js";
import type { PrefixCacheResult } from "../src/prefix-cache.js";

/** One request: 10,000 input tokens, 2,000 cached the automatic way, 8,000 read and 1,000 written at breakpoints. */
const result = {
  turns: 1,
  markdown: "",
  systems: [
    {
      name: "contextblocks (middleware)",
      inputTokens: 10_000,
      requests: [
        { turn: 1, step: 1, tokens: 10_000, cached: 2_000, breakpointRead: 8_000, breakpointWritten: 1_000 },
      ],
    },
  ],
} as unknown as PrefixCacheResult;

describe("the cost model's GPT-5.6 rules", () => {
  it("bills GPT-5.6 by its breakpoints: writes at 1.25x input, reads at 0.1x, with a source and a date", () => {
    const model = MODEL_PRICES.find((price) => price.model === "gpt-5.6-terra")!;
    expect(model).toMatchObject({
      rule: "breakpoints",
      cacheWrite: model.input * 1.25,
      cacheRead: model.input / 10,
    });
    expect(model.source).toMatch(/unverified/);
    expect(model.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const priced = priceSession(result).find(
      (entry) => entry.model === model && entry.label === "contextblocks, cache hints (default)",
    );
    expect(priced?.dollars).toBeCloseTo((1_000 * 2.5 + 8_000 * 0.25 + 1_000 * 3.125) / 1_000_000, 12);
    // gpt-5 (before 5.6) keeps the automatic rule: free writes, the longest shared prefix read.
    const older = priceSession(result).find(
      (entry) => entry.model.model === "gpt-5" && entry.label === "contextblocks, cache hints (default)",
    );
    expect(older?.dollars).toBeCloseTo((8_000 * 1.25 + 2_000 * 0.125) / 1_000_000, 12);
  });
});
