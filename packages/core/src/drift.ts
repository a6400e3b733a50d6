import { headerShape, headerTitle, parseHeader, parseHeaders } from "./prompt-format.js";
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

/** The header shape a configured block renders, whatever its content. */
function expectedShape(block: ExpectedSection): string {
  return headerShape({
    title: headerTitle(block),
    kind: block.kind,
    ...(block.maxTokens ? { maxTokens: block.maxTokens } : {}),
  });
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
    const shape = expectedShape(block);
    const header = sections[position];
    const parsed = header !== undefined ? parseHeader(header) : null;
    if (parsed && headerShape(parsed) === shape) {
      position += 1;
      continue;
    }
    const optional = block.kind === "readonly" && block.whenChanged !== "remind";
    if (!optional)
      return `block "${block.label}" is configured as "${shape}" but the stored prompt does not have it`;
  }
  const extra = sections[position];
  if (extra !== undefined)
    return `the stored prompt has a section "${extra}" that the configuration does not`;
  return null;
}
