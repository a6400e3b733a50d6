import { InMemoryContextProvider } from "@contextblocks/core/memory";
import { describe, expect, it } from "vitest";
import { concurrencySchedules, seededRandom } from "../src/scheduling.js";
import { radioWord } from "../src/searchable.js";
import { createSuite } from "../src/suite.js";

const factory = () => new InMemoryContextProvider();

describe("options are checked, not silently adjusted", () => {
  for (const concurrentWrites of [0, 1, 2.5, -3, Number.NaN]) {
    it(`concurrentWrites: ${concurrentWrites} is refused with a message naming it`, () => {
      expect(() => createSuite(factory, { capabilities: { writable: true }, concurrentWrites })).toThrow(
        /`concurrentWrites` must be a whole number of at least 2/,
      );
    });
  }

  it("concurrencyRounds: 0 is refused", () => {
    expect(() => createSuite(factory, { capabilities: {}, concurrencyRounds: 0 })).toThrow(
      /`concurrencyRounds` must be a whole number of at least 1/,
    );
  });

  it("concurrentWrites is used as given (no cap): 40 writers, 40 distinct search words", () => {
    const suite = createSuite(factory, { capabilities: { searchable: true }, concurrentWrites: 40 });
    expect(suite.writers).toBe(40);
    const words = Array.from({ length: 40 }, (_, index) => radioWord(index));
    expect(new Set(words).size).toBe(40);
    expect(words.every((word) => /^[a-z]+$/.test(word))).toBe(true);
  });
});

describe("concurrency schedules", () => {
  it("cycle through one tick, microtasks, timers and seeded random delays", () => {
    const names = concurrencySchedules(8).map((schedule) => schedule.name);
    expect(names[0]).toMatch(/one tick/);
    expect(names[1]).toMatch(/microtasks/);
    expect(names[2]).toMatch(/timers/);
    expect(names[3]).toMatch(/seeded random delays \(seed \d+\)/);
    expect(new Set(names).size).toBe(8);
  });

  it("the seeded generator repeats for a seed and differs between seeds", () => {
    const first = Array.from({ length: 5 }, seededRandom(7));
    expect(Array.from({ length: 5 }, seededRandom(7))).toEqual(first);
    expect(Array.from({ length: 5 }, seededRandom(8))).not.toEqual(first);
    expect(first.every((value) => value >= 0 && value < 1)).toBe(true);
  });
});
