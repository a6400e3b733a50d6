import { parseSections, renderReminderText, renderSection } from "./prompt-format.js";
import type { ContextBlock } from "./types.js";

/**
 * The sections of `blocks` whose current rendering is not in the frozen prompt, under the preamble, or
 * `null` when all of them are. A block matches only a whole section of the frozen prompt, rule to rule:
 * content that grew or shrank at either end does not pass, and no other block's content can pass for it
 * (block content cannot open a section).
 */
export function renderReminder(frozen: string, blocks: readonly ContextBlock[]): string | null {
  const frozenSections = new Set(parseSections(frozen).map((section) => section.text));
  const changed = blocks.map(renderSection).filter((section) => !frozenSections.has(section));
  return changed.length === 0 ? null : renderReminderText(changed);
}

/** The labels of `blocks` whose current rendering is not a whole section of the frozen prompt. */
export function changedLabels(frozen: string, blocks: readonly ContextBlock[]): string[] {
  const frozenSections = new Set(parseSections(frozen).map((section) => section.text));
  return blocks.filter((block) => !frozenSections.has(renderSection(block))).map((block) => block.label);
}
