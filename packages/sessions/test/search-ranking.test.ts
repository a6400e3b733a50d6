import { describe, expect, it } from "vitest";
import { defaultSearchRanking, searchRankingOf } from "../src/store-kit.js";

describe("searchRankingOf: the weights of a search's ranking, checked", () => {
  it("fills what is not given from the defaults", () => {
    expect(searchRankingOf(undefined, "Store")).toEqual(defaultSearchRanking);
    expect(searchRankingOf({ nearShare: 0.3, nearTurns: 4, extraCandidates: 40 }, "Store")).toEqual({
      ...defaultSearchRanking,
      nearShare: 0.3,
      nearTurns: 4,
      extraCandidates: 40,
    });
  });

  it("fills from a store's own defaults when it gives them, and never changes them", () => {
    const storeDefaults = Object.freeze({ ...defaultSearchRanking, extraCandidates: 160 });
    expect(searchRankingOf(undefined, "Store", storeDefaults)).toEqual(storeDefaults);
    expect(searchRankingOf({ dayShare: 0 }, "Store", storeDefaults)).toEqual({
      ...storeDefaults,
      dayShare: 0,
    });
    expect(searchRankingOf({ extraCandidates: 10 }, "Store", storeDefaults).extraCandidates).toBe(10);
    expect(storeDefaults.extraCandidates).toBe(160);
  });

  it("refuses an unknown weight, a negative or non-finite one, and a fractional nearTurns or extraCandidates, by name", () => {
    expect(() => searchRankingOf({ dayshare: 1 } as never, "Store")).toThrow(
      /Store: searchRanking has no weight "dayshare"/,
    );
    expect(() => searchRankingOf({ dayShare: -1 }, "Store")).toThrow(
      /searchRanking\.dayShare must be a number/,
    );
    expect(() => searchRankingOf({ speakerBoost: Number.NaN }, "Store")).toThrow(/speakerBoost/);
    expect(() => searchRankingOf({ nearTurns: 2.5 }, "Store")).toThrow(/nearTurns must be a whole number/);
    expect(() => searchRankingOf({ extraCandidates: 2.5 }, "Store")).toThrow(
      /extraCandidates must be a whole number/,
    );
    expect(() => searchRankingOf({ extraCandidates: 1_001 }, "Store")).toThrow(/from 0 to 1000/);
    expect(() => searchRankingOf("x" as never, "Store")).toThrow(/searchRanking must be an object/);
  });

  it("refuses an object's inherited names as weights, and quotes hostile names and values short, never calling them", () => {
    // `toString: 3` was taken silently (`name in defaults` is true for what every object inherits).
    for (const name of ["toString", "constructor", "hasOwnProperty", "__proto__"]) {
      expect(() => searchRankingOf(JSON.parse(`{"${name}": 3}`), "Store"), name).toThrow(
        expect.objectContaining({
          code: "INVALID_CONFIG",
          message: expect.stringContaining(`searchRanking has no weight "${name}"`),
        }),
      );
    }
    const refusal = (given: unknown) => {
      try {
        searchRankingOf(given as never, "Store");
      } catch (error) {
        return error as { code: string; message: string };
      }
      throw new Error("expected a refusal");
    };
    // A value whose toString throws: the refusal, not the value's own error.
    const hostile = {
      toString() {
        throw new Error("toString called");
      },
    };
    expect(refusal({ contextWeight: hostile })).toMatchObject({
      code: "INVALID_CONFIG",
      message: "Store: searchRanking.contextWeight must be a number from 0 to 1000, got an object",
    });
    // A 100,000-character value or name comes back clipped, not whole.
    const long = refusal({ dayShare: "9".repeat(100_000) });
    expect(long.message.length).toBeLessThan(200);
    expect(refusal({ ["k".repeat(100_000)]: 1 }).message.length).toBeLessThan(300);
    expect(refusal({ timeWeight: 1n }).message).toContain("got bigint 1");
  });
});
