import { SECTION_RULE } from "./render.js";

/** A section read back from a rendered prompt. */
export interface ParsedSection {
  /** The header line as written. */
  header: string;
  /** The whole section text, rule to end of content, exactly as in the prompt. */
  text: string;
}

/**
 * Splits a rendered prompt back into its sections. A section opens where a rule line, a header line and a
 * rule line follow each other; its text runs to the blank line before the next section. Block content
 * cannot start a line with `═` (see `neutralizeContent`), so content never opens a section.
 * A prompt with no such structure (a plain string written by another system) has no sections.
 */
export function parseSections(prompt: string): ParsedSection[] {
  const lines = prompt.split("\n");
  const starts: number[] = [];
  for (let index = 0; index + 2 < lines.length; index++) {
    if (
      lines[index] === SECTION_RULE &&
      lines[index + 2] === SECTION_RULE &&
      lines[index + 1] !== SECTION_RULE
    ) {
      starts.push(index);
      index += 2;
    }
  }
  return starts.map((start, position) => {
    const next = starts[position + 1];
    // Sections are joined by "\n\n": the line before the next rule is the blank separator.
    const end = next === undefined ? lines.length : next - 1;
    return { header: lines[start + 1] ?? "", text: lines.slice(start, end).join("\n") };
  });
}
