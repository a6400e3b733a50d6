import { planQuery } from "@contextblocks/text";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { excerpt } from "../../src/excerpt.js";
import { approximateTokens } from "../../src/search.js";
import { referenceExcerpt } from "../support/reference-excerpt.js";

/**
 * Property test (issue 25): the excerpt, rewritten to keep each hit as one number, returns exactly what the
 * previous implementation returned, for random entries, queries and window sizes (words sharing prefixes,
 * repeated words, other scripts, punctuation before words, more than 64 occurrences of a word).
 */
const settings = { numRuns: 400, ...(process.env.CI ? { seed: 25_025 } : {}) };

const WORDS = ["run", "running", "runs", "zebra", "zeb", "mango", "東京", "café", "w1", "w108", "w1080", "x"];
const SEPARATORS = [" ", "  ", "\n", ", ", "-", "'", "é", "🥭"];

const text = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 160 })
  .map((parts) => parts.map(([word, separator]) => word + separator).join(""));
const query = fc
  .array(fc.constantFrom(...WORDS, "the", "Running", "ZEBRA"), { minLength: 1, maxLength: 8 })
  .map((words) => words.join(" "));

describe("excerpt (issue 25)", () => {
  it("returns what the previous implementation returned", () => {
    fc.assert(
      fc.property(text, query, fc.integer({ min: 1, max: 400 }), (content, question, maximum) => {
        const terms = planQuery(question)?.terms ?? [];
        expect(excerpt(content, terms, maximum)).toBe(referenceExcerpt(content, terms, maximum));
      }),
      settings,
    );
  });

  it("returns what the previous implementation returned on a long entry with many occurrences", () => {
    const content = Array.from({ length: 400 }, (_, index) =>
      index % 7 === 0 ? "zebra mango" : `w${index}`,
    ).join(" ");
    for (const question of ["zebra", "mango zebra", "w1 w108", "w3 zebra w399"]) {
      const terms = planQuery(question)?.terms ?? [];
      for (const maximum of [20, 140, 600]) {
        expect(excerpt(content, terms, maximum)).toBe(referenceExcerpt(content, terms, maximum));
      }
    }
  });
});

describe("approximateTokens (issue 25)", () => {
  it("counts a quarter token per ASCII character and one per other UTF-16 unit, as before its ASCII shortcut", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 200 }),
        fc.string({ maxLength: 200 }),
        (left, right) => {
          for (const value of [left, right, left + right]) {
            let ascii = 0;
            let other = 0;
            for (let index = 0; index < value.length; index++) {
              if (value.charCodeAt(index) < 128) ascii++;
              else other++;
            }
            expect(approximateTokens(value)).toBe(Math.ceil(ascii / 4) + other);
          }
        },
      ),
      settings,
    );
  });
});
