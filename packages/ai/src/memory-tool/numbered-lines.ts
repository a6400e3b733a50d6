import { ContextError } from "@contextblocks/core";
import { quotedArgument } from "./quoted-argument.js";

/**
 * A file's text with line numbers (a six-wide right-aligned number and a tab, as `cat -n` prints them), the
 * form Claude reads a memory file in. `range` is `view_range`: first and last line, 1-based and inclusive,
 * `-1` as the last meaning "to the end".
 */
export function numberedLines(text: string, range?: readonly number[]): string {
  const lines = text.split("\n");
  let first = 1;
  let last = lines.length;
  if (range !== undefined) {
    const [start, end] = range;
    if (range.length !== 2 || !isLineNumber(start) || !(isLineNumber(end) || end === -1)) {
      throw new ContextError(
        "INVALID_INPUT",
        `view_range must be two whole numbers [first, last] (last -1: to the end), got ${quotedArgument(range)}`,
      );
    }
    const to = end === -1 ? lines.length : end;
    if (start > lines.length || to < start || to > lines.length) {
      throw new ContextError(
        "INVALID_INPUT",
        `view_range ${JSON.stringify(range)} is outside the file's ${lines.length} lines; use first ≤ last ≤ ${lines.length}`,
      );
    }
    first = start;
    last = to;
  }
  return lines
    .slice(first - 1, last)
    .map((line, index) => `${String(first + index).padStart(6)}\t${line}`)
    .join("\n");
}

/** `text` with `insertText` placed after line `line` (0: before the first line). */
export function insertAtLine(text: string, line: unknown, insertText: string): string {
  const lines = text === "" ? [] : text.split("\n");
  if (typeof line !== "number" || !Number.isSafeInteger(line) || line < 0 || line > lines.length) {
    throw new ContextError(
      "INVALID_INPUT",
      `insert_line must be a whole number from 0 (before the first line) to ${lines.length} (after the last), got ${quotedArgument(line)}; nothing was changed`,
    );
  }
  const inserted = insertText.endsWith("\n") ? insertText.slice(0, -1) : insertText;
  return [...lines.slice(0, line), inserted, ...lines.slice(line)].join("\n");
}

function isLineNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}
