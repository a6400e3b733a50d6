import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maxRowBytes, rowBytesOver, rowTooLarge, utf8Bytes, utf8Prefix } from "../../src/store-kit.js";

/** Any UTF-16 code units, lone surrogates included. */
const anyUnits = fc.string({ unit: fc.nat(0xffff).map((code) => String.fromCharCode(code)), maxLength: 64 });

describe("utf8Bytes", () => {
  it("counts what the text takes as UTF-8, lone surrogates as their replacement", () => {
    fc.assert(
      fc.property(fc.oneof(anyUnits, fc.string({ unit: "binary" })), (text) => {
        expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, "utf8"));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("utf8Prefix", () => {
  it("is the longest start within the limit, never half a surrogate pair", () => {
    fc.assert(
      fc.property(fc.oneof(anyUnits, fc.string({ unit: "binary" })), fc.nat(200), (text, limit) => {
        const prefix = utf8Prefix(text, limit);
        expect(text.startsWith(prefix)).toBe(true);
        expect(utf8Bytes(prefix)).toBeLessThanOrEqual(limit);
        if (prefix.length === text.length) return;
        // The next character (both units of a pair) would pass the limit.
        const next = text.codePointAt(prefix.length) as number;
        expect(utf8Bytes(text.slice(0, prefix.length + (next > 0xffff ? 2 : 1)))).toBeGreaterThan(limit);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("rowBytesOver", () => {
  it("is undefined up to the limit and the byte size past it", () => {
    expect(rowBytesOver(["key", "x".repeat(maxRowBytes - 3)])).toBeUndefined();
    expect(rowBytesOver(["key", "x".repeat(maxRowBytes - 2)])).toBe(maxRowBytes + 1);
    // 2 bytes a character: over a third of the limit in units, under the limit in bytes, then over it.
    expect(rowBytesOver(["é".repeat(maxRowBytes / 2)])).toBeUndefined();
    expect(rowBytesOver(["é".repeat(maxRowBytes / 2), "a"])).toBe(maxRowBytes + 1);
    expect(rowBytesOver(["€".repeat(10)], 29)).toBe(30);
  });
});

describe("rowTooLarge", () => {
  it("names the size and the limit, with digits grouped", () => {
    expect(rowTooLarge(["x".repeat(maxRowBytes)])).toBeUndefined();
    expect(rowTooLarge(["x".repeat(maxRowBytes), "yz"])).toBe(
      "is 2,000,002 bytes as UTF-8; a stored row holds at most 2,000,000 (a Durable Object's SQLite refuses larger rows)",
    );
  });
});
