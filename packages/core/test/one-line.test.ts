import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isOneLine } from "../src/prompt-format.js";

// The rule isOneLine applies, as one expression: what it answered before it scanned short text by hand.
const NOT_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

describe("isOneLine", () => {
  it("refuses exactly the control characters and line breaks, in short and long text alike", () => {
    // Mismatches are collected and compared once: 131,072 expect calls took seconds on a loaded machine.
    const mismatches: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const character = String.fromCharCode(code);
      const expected = !NOT_ONE_LINE.test(character);
      if (isOneLine(`label${character}`) !== expected) mismatches.push(`short U+${code.toString(16)}`);
      if (isOneLine(`${"x".repeat(80)}${character}`) !== expected) {
        mismatches.push(`long U+${code.toString(16)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("agrees with the expression on arbitrary text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 100 }), (text) => {
        expect(isOneLine(text)).toBe(!NOT_ONE_LINE.test(text));
      }),
      { numRuns: 3_000 },
    );
  });
});
