/**
 * The prompt format, rendered and parsed in one place: section headers, sections, the whole prompt, the
 * reminder's preamble, and the one-line rule for fields shown in a header or an entry list. Drift detection,
 * reminders and the AI adapter read prompts back only through this module.
 */
import { neutralizeContent, SECTION_RULE } from "./render.js";
import type { BlockKind, ContextBlock } from "./types.js";

export { SECTION_RULE };

/** The note above reminder sections (the same words agents/context sends). */
export const REMINDER_PREAMBLE =
  "These context blocks changed after the system prompt was written. Their current values below replace the ones in the system prompt.";

const KINDS: readonly BlockKind[] = ["readonly", "writable", "loadable", "searchable"];

// ── One-line fields ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Characters that break a one-line field or hide in it: C0 and C1 controls (line feed, carriage return,
 * vertical tab, form feed, NEL, NUL, …) and the Unicode line and paragraph separators.
 */
const NOT_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const NOT_ONE_LINE_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** Up to this length `isOneLine` checks character by character; longer text goes to the expression. */
const SCAN_LENGTH = 64;

/** True when `text` renders on one line: no line break of any kind and no other control character. */
export function isOneLine(text: string): boolean {
  // Labels and descriptions are short, and every config checks them: a loop over the character codes is
  // several times cheaper than a call into the regular expression. Both test the same characters.
  if (text.length > SCAN_LENGTH) return !NOT_ONE_LINE.test(text);
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) return false;
  }
  return true;
}

/** `text` on one line: each run of line breaks or control characters becomes one space. */
export function toOneLine(text: string): string {
  return text.replace(NOT_ONE_LINE_RUNS, " ");
}

// ── Headers ─────────────────────────────────────────────────────────────────────────────────────────────

/** The part of a header that names the block: `LABEL` or `LABEL (description)`. */
export function headerTitle(block: { label: string; description?: string | undefined }): string {
  return block.description
    ? `${block.label.toUpperCase()} (${block.description})`
    : block.label.toUpperCase();
}

/** The header line: `LABEL (description) [P% — T/M tokens] [marker]`. */
export function renderHeader(
  block: Pick<ContextBlock, "label" | "description" | "tokens" | "maxTokens" | "kind">,
): string {
  const usage = block.maxTokens ? ` ${renderUsage(block.tokens, block.maxTokens)}` : "";
  return `${headerTitle(block)}${usage} [${block.kind}]`;
}

/** `[P% — T/M tokens]`, P rounded to a whole percent. */
export function renderUsage(tokens: number, maxTokens: number): string {
  return `[${usagePercent(tokens, maxTokens)}% — ${tokens}/${maxTokens} tokens]`;
}

export function usagePercent(tokens: number, maxTokens: number): number {
  return Math.round((tokens / maxTokens) * 100);
}

/** A header read back: its title, its token limit when it shows usage, and its kind marker. */
export interface ParsedHeader {
  title: string;
  maxTokens?: number;
  kind: BlockKind;
}

const USAGE = /^ \[\d+% — \d+\/(\d+) tokens\]$/;

/** Reads a header line back, or `null` when it does not end with a kind marker. Scans from the end. */
export function parseHeader(header: string): ParsedHeader | null {
  const markerAt = header.lastIndexOf(" [");
  if (markerAt === -1 || !header.endsWith("]")) return null;
  const kind = header.slice(markerAt + 2, -1) as BlockKind;
  if (!KINDS.includes(kind)) return null;
  const title = header.slice(0, markerAt);
  const usageAt = title.lastIndexOf(" [");
  const usage = usageAt === -1 ? null : USAGE.exec(title.slice(usageAt));
  if (usage) return { title: title.slice(0, usageAt), maxTokens: Number(usage[1]), kind };
  return { title, kind };
}

/**
 * What a header says whatever the block's content: title, limit and kind (usage numbers change with
 * content). Two blocks of one configuration never share a shape (see the registry's clash check).
 */
export function headerShape(header: ParsedHeader): string {
  const limit = header.maxTokens ? ` [limit ${header.maxTokens}]` : "";
  return `${header.title}${limit} [${header.kind}]`;
}

/**
 * Whether `header` reads back (`parseHeader`) with the shape `headerShape` gives `expected`: the same as
 * `headerShape(parseHeader(header)) === headerShape(expected)`, but for the headers the renderer writes it
 * compares in place, without slicing the header or building either shape (a cold start checks every block).
 */
export function headerHasShape(header: string, expected: ParsedHeader): boolean {
  return headerHasShapeAt(header, 0, header.length, expected);
}

/** `headerHasShape` for the header line `text` holds from `start` to `end` (compared where it lies). */
export function headerHasShapeAt(text: string, start: number, end: number, expected: ParsedHeader): boolean {
  const { title, kind, maxTokens } = expected;
  const titleEnd = start + title.length;
  const suffixLength = kind.length + 3; // " [" + kind + "]"
  const middleEnd = end - suffixLength;
  if (
    middleEnd >= titleEnd &&
    text.startsWith(title, start) &&
    text.charCodeAt(middleEnd) === 32 &&
    text.charCodeAt(middleEnd + 1) === 91 &&
    text.startsWith(kind, middleEnd + 2) &&
    text.charCodeAt(end - 1) === 93
  ) {
    if (maxTokens) {
      // Only the usage may sit between title and kind, and it must name this limit.
      if (isUsageOf(text, titleEnd, middleEnd, maxTokens)) return true;
    } else if (middleEnd === titleEnd && !title.includes(" [")) {
      // Nothing between title and kind, and no bracket in the title that parsing could take for usage.
      return true;
    }
  }
  // Anything else (a foreign or unusual header): read it back and compare the shapes.
  const parsed = parseHeader(start === 0 && end === text.length ? text : text.slice(start, end));
  return parsed !== null && headerShape(parsed) === headerShape(expected);
}

/**
 * Whether `header` from `start` to `end` (which may lie inside a longer text) is exactly ` [P% — T/M tokens]` with M written as `maxTokens` is
 * (what `renderUsage` writes). Compared in place; `USAGE` accepts more (leading zeros), which callers check
 * the slow way.
 */
function isUsageOf(header: string, start: number, end: number, maxTokens: number): boolean {
  if (header.charCodeAt(start) !== 32 || header.charCodeAt(start + 1) !== 91) return false;
  let at = skipDigits(header, start + 2, end);
  if (at === start + 2 || !header.startsWith("% — ", at)) return false;
  const tokensAt = at + 4;
  at = skipDigits(header, tokensAt, end);
  if (at === tokensAt || header.charCodeAt(at) !== 47) return false;
  const limit = String(maxTokens);
  if (at + 1 + limit.length > end || !header.startsWith(limit, at + 1)) return false;
  at += 1 + limit.length;
  return end - at === 8 && header.startsWith(" tokens]", at);
}

/** The index after the ASCII digits of `text` from `start` (at most to `end`). */
function skipDigits(text: string, start: number, end: number): number {
  let at = start;
  while (at < end) {
    const code = text.charCodeAt(at);
    if (code < 48 || code > 57) break;
    at++;
  }
  return at;
}

/** The block a header belongs to, among `blocks` (by title), or the title's label part when none. */
export function labelOfHeader(
  header: string,
  blocks: ReadonlyArray<{ label: string; description?: string | undefined }>,
): string {
  const title = parseHeader(header)?.title ?? header;
  const block = blocks.find((candidate) => headerTitle(candidate) === title);
  if (block) return block.label;
  const description = title.indexOf(" (");
  return description === -1 ? title : title.slice(0, description);
}

// ── Sections and the prompt ─────────────────────────────────────────────────────────────────────────────

/** One section: rule, header, rule, content (content passed through the structure rule). */
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

/**
 * The header lines of a rendered prompt, in order: exactly the `header` of each of `parseSections`'s
 * sections, found by scanning for rule lines instead of splitting the prompt into lines and sections.
 */
export function parseHeaders(prompt: string): string[] {
  const headers: string[] = [];
  const scan = new HeaderScan(prompt);
  while (scan.next()) headers.push(prompt.slice(scan.start, scan.end));
  return headers;
}

/**
 * Walks the header lines of a rendered prompt in place, in order (the ones `parseHeaders` lists): after
 * `next()` answers true, the header line runs from `start` to `end`. Nothing is sliced or split, so a cold
 * start checks a stored prompt's headers against the configuration without copying them.
 */
export class HeaderScan {
  /** Where the current header line starts. */
  start = 0;
  /** Where the current header line ends (its line break). */
  end = 0;
  /** Where to look for the next rule; -1 when there is none. */
  #at: number;

  constructor(private readonly prompt: string) {
    this.#at = prompt.indexOf(SECTION_RULE);
  }

  /** Moves to the next header line; false when there is none. */
  next(): boolean {
    const prompt = this.prompt;
    const rule = SECTION_RULE.length;
    let at = this.#at;
    while (at !== -1) {
      const opens = (at === 0 || prompt.charCodeAt(at - 1) === 10) && prompt.charCodeAt(at + rule) === 10;
      if (opens) {
        const headerStart = at + rule + 1;
        const headerEnd = prompt.indexOf("\n", headerStart);
        if (headerEnd === -1) break;
        const closing = headerEnd + 1;
        const isRule = headerEnd - headerStart === rule && prompt.startsWith(SECTION_RULE, headerStart);
        if (
          !isRule &&
          prompt.startsWith(SECTION_RULE, closing) &&
          (closing + rule === prompt.length || prompt.charCodeAt(closing + rule) === 10)
        ) {
          this.start = headerStart;
          this.end = headerEnd;
          this.#at = prompt.indexOf(SECTION_RULE, closing + rule);
          return true;
        }
      }
      at = prompt.indexOf(SECTION_RULE, at + 1);
    }
    this.#at = -1;
    return false;
  }
}

// ── The reminder ────────────────────────────────────────────────────────────────────────────────────────

/** The reminder text: the preamble, then the changed sections, joined by blank lines. */
export function renderReminderText(sections: readonly string[]): string {
  return [REMINDER_PREAMBLE, ...sections].join("\n\n");
}
