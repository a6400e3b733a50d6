import { describe, expect, it } from "vitest";
import { extractSnippets, snippetModule } from "../src/extract.js";

const FENCE = "```";

describe("extractSnippets", () => {
  it("finds ts blocks, their markers and preambles, and leaves other fences alone", () => {
    const readme = [
      "# Title",
      `${FENCE}sh`,
      "echo not typescript",
      `${FENCE}ts`,
      "",
      FENCE,
      "",
      `${FENCE}ts`,
      "const plain = 1;",
      FENCE,
      "<!-- readme-check: run -->",
      "",
      `${FENCE}typescript`,
      "console.log(2);",
      FENCE,
      "<!-- readme-check: compile-worker",
      'import type { LanguageModel } from "ai";',
      "this: { ctx: DurableObjectState }",
      "declare const model: LanguageModel;",
      "-->",
      `${FENCE}ts`,
      'import { x } from "y";',
      "await this.ctx.blockConcurrencyWhile(async () => {});",
      FENCE,
      "<!-- readme-check: skip: a sketch -->",
      `${FENCE}ts`,
      "nonsense(",
      FENCE,
    ].join("\n");
    const snippets = extractSnippets("README.md", readme);
    expect(snippets.map((snippet) => [snippet.line, snippet.mode])).toEqual([
      [8, "compile"],
      [13, "run"],
      [21, "compile-worker"],
      [26, "skip"],
    ]);
    expect(snippets[3]?.reason).toBe("a sketch");
    const worker = snippets[2];
    expect(worker?.thisType).toBe("{ ctx: DurableObjectState }");
    const module = snippetModule(worker!);
    expect(module.indexOf('import { x } from "y";')).toBeLessThan(
      module.indexOf("import type { LanguageModel }"),
    );
    expect(module).toContain("export async function readmeSnippet(this: { ctx: DurableObjectState }) {");
    expect(module).toContain("declare const model: LanguageModel;");
  });

  it("refuses an unknown marker and a skip without a reason, naming the line", () => {
    expect(() => extractSnippets("a.md", `<!-- readme-check: runn -->\n${FENCE}ts\nx\n${FENCE}`)).toThrow(
      /a\.md:2: unknown readme-check marker "runn"/,
    );
    expect(() => extractSnippets("a.md", `<!-- readme-check: skip: -->\n${FENCE}ts\nx\n${FENCE}`)).toThrow(
      /unknown readme-check marker/,
    );
  });
});
