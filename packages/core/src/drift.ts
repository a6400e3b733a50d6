import { parseSections } from "./sections.js";
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

/** The usage part of a header: the one right before the closing marker. */
const USAGE = / \[\d+% — \d+\/(\d+) tokens\](?= \[[a-z]+\]$)/;

/** A header without its usage numbers, which change with content: only the limit stays. */
function headerShape(header: string): string {
  return header.replace(USAGE, " [limit $1]");
}

/** The shape a configured block's header has, whatever its content: `headerShape` of `renderHeader`. */
function expectedShape(block: ExpectedSection): string {
  const description = block.description ? ` (${block.description})` : "";
  const limit = block.maxTokens ? ` [limit ${block.maxTokens}]` : "";
  return `${block.label.toUpperCase()}${description}${limit} [${block.kind}]`;
}

/**
 * Compares a stored prompt's section headers with the configuration, in order. Returns why they differ,
 * or `null` when the stored prompt could have been rendered from this configuration. Empty read-only
 * blocks are skipped when rendering, so those may be absent. A stored prompt with no sections at all (a
 * plain string written by another system) is taken as it is, unless it is empty and the configuration
 * now has a block that always renders.
 */
export function detectDrift(stored: string, expected: readonly ExpectedSection[]): string | null {
  const sections = parseSections(stored);
  if (sections.length === 0 && stored.trim().length > 0) return null;
  let position = 0;
  for (const block of expected) {
    const shape = expectedShape(block);
    const section = sections[position];
    if (section && headerShape(section.header) === shape) {
      position += 1;
      continue;
    }
    const optional = block.kind === "readonly" && block.whenChanged !== "remind";
    if (!optional)
      return `block "${block.label}" is configured as "${shape}" but the stored prompt does not have it`;
  }
  const extra = sections[position];
  if (extra) return `the stored prompt has a section "${extra.header}" that the configuration does not`;
  return null;
}
