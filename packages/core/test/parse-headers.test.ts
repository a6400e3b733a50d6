import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ADVERSARIAL_TEXTS } from "../../conformance/src/adversarial.js";
import { parseSections } from "../src/index.js";
import {
  headerHasShape,
  headerShape,
  type ParsedHeader,
  parseHeader,
  parseHeaders,
} from "../src/prompt-format.js";
import { SECTION_RULE } from "../src/store-kit.js";

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

// Drift detection compares each stored header with the configured block's shape in place (headerHasShape);
// it must answer exactly what reading the header back and comparing shapes answers.
describe("headerHasShape", () => {
  const slow = (header: string, expected: ParsedHeader) => {
    const parsed = parseHeader(header);
    return parsed !== null && headerShape(parsed) === headerShape(expected);
  };

  it("agrees with parseHeader + headerShape on headers made of titles, usages and markers", () => {
    const title = fc.constantFrom(
      "MEMORY",
      "MEMORY (facts)",
      "A [B]",
      "X [5% — 1/100 tokens]",
      "",
      "M [",
      "M ]",
    );
    const usage = fc.constantFrom(
      "",
      " [0% — 0/0 tokens]",
      " [5% — 10/200 tokens]",
      " [5% — 10/100 tokens]",
      " [x]",
    );
    const marker = fc.constantFrom(
      " [writable]",
      " [readonly]",
      " [searchable]",
      " [loadable]",
      " [other]",
      "",
      "]",
    );
    const expected = fc.record(
      {
        title: fc.constantFrom("MEMORY", "MEMORY (facts)", "A [B]", "X [5% — 1/100 tokens]", "X", ""),
        kind: fc.constantFrom("writable", "readonly", "searchable", "loadable"),
        maxTokens: fc.constantFrom(100, 200, 0),
      },
      { requiredKeys: ["title", "kind"] },
    ) as fc.Arbitrary<ParsedHeader>;
    fc.assert(
      fc.property(title, usage, marker, expected, (head, middle, tail, shape) => {
        const header = head + middle + tail;
        expect(headerHasShape(header, shape)).toBe(slow(header, shape));
      }),
      { numRuns: 5_000 },
    );
  });
});
