import { ContextError } from "./errors.js";

/** Occurrences of `needle` in `text`, counted left to right without overlap (as Python's `str.count`). */
export function countOccurrences(text: string, needle: string): number {
  if (needle.length === 0) return 0;
  let count = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) {
    count++;
  }
  return count;
}

/**
 * `text` with its one occurrence of `oldStr` replaced by `newStr` (an empty `newStr` deletes it). Fails with
 * `NO_MATCH` when `oldStr` does not occur and `MULTIPLE_MATCHES` (saying how many times) when it occurs more
 * than once, so the model can add surrounding text and try again. The names are those of the text-editor
 * tools models are trained on (Anthropic's `str_replace_based_edit_tool`, Letta's `memory_replace`).
 */
export function applyEdit(
  label: string,
  text: string,
  oldStr: string,
  newStr: string,
  /** How messages name the edited text: the block's label, or an entry (`skills entry "deploy"`). */
  where: string = label,
): string {
  if (oldStr.length === 0) {
    throw new ContextError(
      "INVALID_INPUT",
      `Block ${where === label ? `"${label}"` : where}: old_str is empty; give the exact text to replace (to add at the end, append with set_context)`,
      { label },
    );
  }
  const count = countOccurrences(text, oldStr);
  if (count === 0) {
    throw new ContextError(
      "NO_MATCH",
      `old_str does not occur in ${where}; nothing was changed. Copy the exact text (spaces and line breaks included) from the block's current content.`,
      { label },
    );
  }
  if (count > 1) {
    throw new ContextError(
      "MULTIPLE_MATCHES",
      `old_str occurs ${count} times in ${where}; nothing was changed. Include more of the surrounding text so it matches exactly once.`,
      { label },
    );
  }
  const index = text.indexOf(oldStr);
  return text.slice(0, index) + newStr + text.slice(index + oldStr.length);
}
