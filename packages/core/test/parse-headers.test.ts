import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ADVERSARIAL_TEXTS } from "../../conformance/src/adversarial.js";
import { parseSections, SECTION_RULE } from "../src/index.js";
import { parseHeaders } from "../src/prompt-format.js";

// Drift detection reads a stored prompt's headers with parseHeaders (a scan, no split); it must find exactly
// the headers parseSections finds, on any text, including text made of rule lines, headers and line breaks.
const headersOf = (prompt: string) => parseSections(prompt).map((section) => section.header);

describe("parseHeaders", () => {
  it("finds the headers parseSections finds, on rendered-looking and broken structures", () => {
    const cases = [
      "",
      "plain text",
      `${SECTION_RULE}\nA [readonly]\n${SECTION_RULE}\nbody`,
      `${SECTION_RULE}\nA [readonly]\n${SECTION_RULE}`,
      `${SECTION_RULE}\nA [readonly]\n${SECTION_RULE}\n\n${SECTION_RULE}\nB [writable]\n${SECTION_RULE}\nx`,
      `${SECTION_RULE}\n${SECTION_RULE}\nA\n${SECTION_RULE}\n`,
      `${SECTION_RULE}═\nA\n${SECTION_RULE}\n`,
      `x${SECTION_RULE}\nA\n${SECTION_RULE}\n`,
      `${SECTION_RULE}\nA\n${SECTION_RULE}═`,
      `${SECTION_RULE}\n\n${SECTION_RULE}`,
      `${SECTION_RULE}\nA\n${SECTION_RULE}\nB\n${SECTION_RULE}`,
      ...ADVERSARIAL_TEXTS.map((entry) => `${SECTION_RULE}\nA [readonly]\n${SECTION_RULE}\n${entry.text}`),
    ];
    for (const prompt of cases)
      expect(parseHeaders(prompt), JSON.stringify(prompt)).toEqual(headersOf(prompt));
  });

  it("agrees with parseSections on arbitrary texts made of rules, headers and line breaks", () => {
    const piece = fc.constantFrom(SECTION_RULE, `${SECTION_RULE}═`, "\n", "\n\n", "A [readonly]", "═", "x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const prompt = pieces.join("");
        expect(parseHeaders(prompt)).toEqual(headersOf(prompt));
      }),
      { numRuns: 2_000 },
    );
  });
});
