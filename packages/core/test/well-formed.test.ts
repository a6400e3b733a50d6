import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isWellFormed, loneSurrogateIndex, wellFormedPrefix } from "../src/store-kit.js";
import { assertWellFormed } from "../src/well-formed.js";

describe("isWellFormed / loneSurrogateIndex", () => {
  it("finds the first lone surrogate, high or low, and accepts pairs", () => {
    expect(loneSurrogateIndex("")).toBe(-1);
    expect(loneSurrogateIndex("plain 🚀 text 𝔘")).toBe(-1);
    expect(loneSurrogateIndex("ab\ud800")).toBe(2);
    expect(loneSurrogateIndex("ab\ud800c")).toBe(2);
    expect(loneSurrogateIndex("\udc00")).toBe(0);
    expect(loneSurrogateIndex("🚀\udfff\ud800")).toBe(2);
    expect(loneSurrogateIndex("\ud83d\ud83d\ude80")).toBe(0);
    expect(isWellFormed("🚀")).toBe(true);
    expect(isWellFormed("\ud83d")).toBe(false);
  });

  it("agrees with String.prototype.isWellFormed on any UTF-16, surrogates over-represented", () => {
    const unit = fc.oneof(
      fc.integer({ min: 0xd800, max: 0xdfff }),
      fc.integer({ min: 0, max: 0xffff }),
      fc.constantFrom(0x61, 0xd83d, 0xde80),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 12 }), (units) => {
        const text = String.fromCharCode(...units);
        const native = (text as unknown as { isWellFormed(): boolean }).isWellFormed();
        expect(isWellFormed(text)).toBe(native);
        const index = loneSurrogateIndex(text);
        if (index !== -1) {
          // The first one: everything before it is well-formed, and it is a surrogate.
          expect(isWellFormed(text.slice(0, index))).toBe(true);
          expect(text.charCodeAt(index) & 0xf800).toBe(0xd800);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("assertWellFormed throws the caller's error with the index", () => {
    expect(() => assertWellFormed("x\ud83d", (index) => new RangeError(`lone at ${index}`))).toThrow(
      "lone at 1",
    );
    expect(() => assertWellFormed("x🚀", () => new Error("never"))).not.toThrow();
  });
});

describe("wellFormedPrefix", () => {
  it("cuts at the length, one unit short where it would split a surrogate pair, and keeps whole text", () => {
    expect(wellFormedPrefix("harbour", 4)).toBe("harb");
    expect(wellFormedPrefix("ab🚀cd", 3)).toBe("ab");
    expect(wellFormedPrefix("ab🚀cd", 4)).toBe("ab🚀");
    expect(wellFormedPrefix("🚀", 1)).toBe("");
    expect(wellFormedPrefix("tide", 10)).toBe("tide");
    expect(wellFormedPrefix("tide", 0)).toBe("");
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 12 }), fc.nat({ max: 40 }), (text, length) => {
        const prefix = wellFormedPrefix(text, length);
        expect(text.startsWith(prefix)).toBe(true);
        expect(isWellFormed(prefix)).toBe(true);
        expect(prefix.length).toBeGreaterThanOrEqual(Math.min(length, text.length) - 1);
        expect(prefix.length).toBeLessThanOrEqual(length);
      }),
      { numRuns: 1_000 },
    );
  });
});
