import type { BlockKind, ContextBlock } from "./types.js";

/** The rule line above and below each section header: 46 box-drawing double lines. */
export const SECTION_RULE = "═".repeat(46);

/**
 * The structure rule. Only the renderer may start a line with `═`: in block content, a `═` at the start of a
 * line (after `\n`, `\r`, U+2028 or U+2029, or at the very start) is written as `=`. Content therefore
 * cannot produce a rule line, so it cannot open a section, forge a header, or pass for another block when
 * the prompt is parsed back (drift detection, reminders). Content without such lines renders byte for byte.
 */
export function neutralizeContent(content: string): string {
  return content.replace(/(^|[\n\r\u2028\u2029])═/g, "$1=");
}

/** The header line: `LABEL (description) [P% — T/M tokens] [marker]`. */
export function renderHeader(
  block: Pick<ContextBlock, "label" | "description" | "tokens" | "maxTokens" | "kind">,
) {
  let header = block.label.toUpperCase();
  if (block.description) header += ` (${block.description})`;
  if (block.maxTokens) header += ` ${renderUsage(block.tokens, block.maxTokens)}`;
  return `${header} [${block.kind}]`;
}

/** `[P% — T/M tokens]`, P rounded to a whole percent. */
export function renderUsage(tokens: number, maxTokens: number): string {
  return `[${usagePercent(tokens, maxTokens)}% — ${tokens}/${maxTokens} tokens]`;
}

export function usagePercent(tokens: number, maxTokens: number): number {
  return Math.round((tokens / maxTokens) * 100);
}

/** One section: rule, header, rule, content. */
export function renderSection(block: ContextBlock): string {
  return `${SECTION_RULE}\n${renderHeader(block)}\n${SECTION_RULE}\n${neutralizeContent(block.content)}`;
}

/**
 * An empty read-only block is left out: it tells the model nothing. Blocks the model can act on, and remind
 * blocks (so a later value has a copy to replace), always render.
 */
export function rendersInPrompt(block: ContextBlock): boolean {
  return block.content.length > 0 || block.kind !== "readonly" || block.whenChanged === "remind";
}

/** The whole prompt: sections in declaration order, joined by one blank line. */
export function renderPrompt(blocks: readonly ContextBlock[]): string {
  return blocks.filter(rendersInPrompt).map(renderSection).join("\n\n");
}
