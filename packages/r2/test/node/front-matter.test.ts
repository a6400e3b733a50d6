import { describe, expect, it } from "vitest";
import { parseFrontMatter } from "../../src/import/front-matter.js";

describe("parseFrontMatter", () => {
  it("reads plain, quoted, folded and literal values and skips nested ones", () => {
    const { fields, body } = parseFrontMatter(
      [
        "---",
        "name: code-review # trailing comment",
        'title: "Say \\"hi\\" \\u00e9"',
        "quote: 'it''s'",
        "folded: >-",
        "  one",
        "  two",
        "literal: |",
        "  line one",
        "  line two",
        "plain: starts here",
        "  and continues",
        "metadata:",
        "  nested: skipped",
        "list: [a, b]",
        "---",
        "Body text.",
      ].join("\n"),
    );
    expect(fields).toEqual({
      name: "code-review",
      title: 'Say "hi" é',
      quote: "it's",
      folded: "one two",
      literal: "line one\nline two",
      plain: "starts here and continues",
    });
    expect(body).toBe("Body text.");
  });

  it("leaves text without front-matter (or never closed) as the body", () => {
    expect(parseFrontMatter("# Title\n\nBody")).toEqual({ fields: {}, body: "# Title\n\nBody" });
    expect(parseFrontMatter("---\nname: x\nno end")).toEqual({ fields: {}, body: "---\nname: x\nno end" });
  });

  it("handles a byte-order mark, CRLF line ends and prototype-like names", () => {
    const { fields, body } = parseFrontMatter("\ufeff---\r\nname: a\r\n__proto__: b\r\n---\r\nBody\r\n");
    expect(fields.name).toBe("a");
    expect(Object.getOwnPropertyDescriptor(fields, "__proto__")?.value).toBe("b");
    expect(body).toBe("Body\n");
  });

  it("reads a large hostile front-matter in linear time (no backtracking blow-up)", () => {
    const line = `k: ${"a #".repeat(20_000)}${" ".repeat(20_000)}'`;
    const text = `---\n${`${line}\n`.repeat(20)}${"  ".repeat(10_000)}\n---\nbody`;
    expect(parseFrontMatter(text).body).toBe("body");
  });
});
