import {
  headerHasShape,
  headerShape,
  headerTitle,
  type ParsedHeader,
  parseHeaders,
} from "./prompt-format.js";
import type { BlockKind, WhenChanged } from "./types.js";

/** What to do when the stored prompt was rendered from a different block configuration. */
export type DriftPolicy = "rerender" | "keep";

/** What drift detection needs to know about one configured block. */
export interface ExpectedSection {
  label: string;
  description?: string;
  maxTokens?: number;
  kind: BlockKind;
  whenChanged: WhenChanged;
}

/** The header a configured block renders, whatever its content, as `parseHeader` reads it back. */
function expectedHeader(block: ExpectedSection): ParsedHeader {
  // No object spread here: it is slow in V8 (Node 20), and a cold start checks every block.
  const header: ParsedHeader = { title: headerTitle(block), kind: block.kind };
  if (block.maxTokens) header.maxTokens = block.maxTokens;
  return header;
}

/**
 * Compares a stored prompt's section headers with the configuration, in order. Returns why they differ,
 * or `null` when the stored prompt could have been rendered from this configuration. Empty read-only
 * blocks are skipped when rendering, so those may be absent. A stored prompt with no sections at all (a
 * plain string written by another system) is taken as it is, unless it is empty and the configuration
 * now has a block that always renders.
 */
export function detectDrift(stored: string, expected: readonly ExpectedSection[]): string | null {
  const sections = parseHeaders(stored);
  if (sections.length === 0 && stored.trim().length > 0) return null;
  let position = 0;
  for (const block of expected) {
    const shape = expectedHeader(block);
    const header = sections[position];
    if (header !== undefined && headerHasShape(header, shape)) {
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
