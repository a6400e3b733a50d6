import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { detectDrift, type ExpectedSection, expectedHeader, findDrift } from "../src/drift.js";
import {
  headerShape,
  headerTitle,
  type ParsedHeader,
  parseHeader,
  parseSections,
  SECTION_RULE,
} from "../src/prompt-format.js";

/**
 * Drift detection as it was written before the in-place walk: split the prompt into sections
 * (`parseSections`), read each header back (`parseHeader`) and compare shapes as strings. The fast path
 * (`findDrift` over the registry's precomputed headers) must answer exactly what this answers.
 */
function referenceDrift(stored: string, expected: readonly ExpectedSection[]): string | null {
  const sections = parseSections(stored).map((section) => section.header);
  if (sections.length === 0 && stored.trim().length > 0) return null;
  let position = 0;
  for (const block of expected) {
    const shape: ParsedHeader = { title: headerTitle(block), kind: block.kind };
    if (block.maxTokens) shape.maxTokens = block.maxTokens;
    const header = sections[position];
    const parsed = header === undefined ? null : parseHeader(header);
    if (parsed !== null && headerShape(parsed) === headerShape(shape)) {
      position += 1;
      continue;
    }
    const optional = block.kind === "readonly" && block.whenChanged !== "remind";
    if (!optional)
      return `block "${block.label}" is configured as "${headerShape(shape)}" but the stored prompt does not have it`;
  }
  const extra = sections[position];
  if (extra !== undefined)
    return `the stored prompt has a section "${extra}" that the configuration does not`;
  return null;
}

const section = fc.record(
  {
    label: fc.constantFrom("memory", "notes", "a", "MEMORY", "x [y]"),
    description: fc.constantFrom("Facts", "Budget [5% — 1/20 tokens]", "a (b)", "Ünïcode ═"),
    maxTokens: fc.constantFrom(100, 1_000, 12_345),
    kind: fc.constantFrom("readonly", "writable", "searchable", "loadable"),
    whenChanged: fc.constantFrom("wait", "remind"),
  },
  { requiredKeys: ["label", "kind", "whenChanged"] },
) as fc.Arbitrary<ExpectedSection>;

/** The header a block renders, with any usage numbers, or a near miss of it. */
function headerLine(block: ExpectedSection, tokens: number, variant: number): string {
  const title = headerTitle(block);
  const usage = block.maxTokens
    ? ` [${Math.round((tokens / block.maxTokens) * 100)}% — ${tokens}/${block.maxTokens} tokens]`
    : "";
  switch (variant) {
    case 0:
      return `${title}${usage} [${block.kind}]`;
    case 1: // another limit
      return `${title} [5% — 5/${(block.maxTokens ?? 50) * 2} tokens] [${block.kind}]`;
    case 2: // another kind
      return `${title}${usage} [${block.kind === "writable" ? "readonly" : "writable"}]`;
    case 3: // leading zeros in the usage (parsed, not written by the renderer)
      return `${title}${block.maxTokens ? ` [05% — 007/${block.maxTokens} tokens]` : ""} [${block.kind}]`;
    default: // no marker
      return title;
  }
}

const part = (blocks: readonly ExpectedSection[]) =>
  fc.oneof(
    fc.record({
      index: fc.nat({ max: Math.max(blocks.length - 1, 0) }),
      tokens: fc.nat({ max: 20_000 }),
      variant: fc.constantFrom(0, 0, 0, 1, 2, 3, 4),
      content: fc.constantFrom("", "text", `x\n${SECTION_RULE}`, "═", "\n"),
    }),
    fc.constantFrom(SECTION_RULE, "\n", "\n\n", "plain", "A [readonly]", `${SECTION_RULE}═`),
  );

/** A stored prompt made of the configuration's sections (some left out, repeated or altered) and noise. */
const storedAndExpected = fc.array(section, { maxLength: 6 }).chain((blocks) =>
  fc.array(part(blocks), { maxLength: 10 }).map((parts) => {
    const pieces = parts.map((piece) => {
      if (typeof piece === "string") return piece;
      const block = blocks[piece.index];
      if (block === undefined) return "";
      const header = headerLine(block, piece.tokens, piece.variant);
      return `${SECTION_RULE}\n${header}\n${SECTION_RULE}\n${piece.content}`;
    });
    return { stored: pieces.join("\n\n"), blocks };
  }),
);

describe("findDrift (in place, precomputed headers)", () => {
  it("answers exactly what splitting the prompt and comparing shapes answers", () => {
    fc.assert(
      fc.property(storedAndExpected, ({ stored, blocks }) => {
        const expected = referenceDrift(stored, blocks);
        expect(detectDrift(stored, blocks)).toBe(expected);
        expect(
          findDrift(
            stored,
            blocks.map((block) => expectedHeader(block)),
          ),
        ).toBe(expected);
      }),
      { numRuns: 5_000 },
    );
  });

  it("agrees on prompts rendered from the configuration itself, in order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(section, { maxLength: 8, selector: (block) => headerTitle(block) }),
        fc.array(fc.nat({ max: 5_000 }), { minLength: 8, maxLength: 8 }),
        (blocks, tokens) => {
          const stored = blocks
            .map(
              (block, index) =>
                `${SECTION_RULE}\n${headerLine(block, tokens[index] ?? 0, 0)}\n${SECTION_RULE}\nbody ${index}`,
            )
            .join("\n\n");
          expect(referenceDrift(stored, blocks)).toBeNull();
          expect(
            findDrift(
              stored,
              blocks.map((block) => expectedHeader(block)),
            ),
          ).toBeNull();
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe("a drift reason", () => {
  it("quotes a long header clipped, so a long description is not warned in full on every wake", () => {
    const description = "d".repeat(10_000);
    const configured = detectDrift("", [
      { label: "memory", description, kind: "writable", whenChanged: "wait" },
    ]);
    expect(configured).toMatch(/^block "memory" is configured as "MEMORY \(d+…" but the stored prompt/);
    expect(configured?.length).toBeLessThan(400);
    const stored = `${SECTION_RULE}\nMEMORY (${description}) [writable]\n${SECTION_RULE}\nkept`;
    const extra = detectDrift(stored, []);
    expect(extra).toMatch(/^the stored prompt has a section ".*…" that the configuration does not$/s);
    expect(extra?.length).toBeLessThan(400);
  });
});
