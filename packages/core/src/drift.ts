import { clipped } from "./describe-value.js";
import { type HashPair, hashText } from "./fingerprint.js";
import {
  HeaderScan,
  headerHasShapeAt,
  headerShape,
  headerTitle,
  type ParsedHeader,
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

/**
 * A configured block's header as drift detection compares it, worked out once per configuration (the block
 * registry keeps one per block), so a cold start builds no title or shape.
 */
export interface ExpectedHeader {
  readonly label: string;
  /** The header the block renders, whatever its content, as `parseHeader` reads it back. */
  readonly shape: ParsedHeader;
  /** An empty read-only block is not rendered, so its header may be absent. */
  readonly optional: boolean;
  /** A hash of the shape and `optional`: what the configuration's fingerprint is folded from. */
  readonly hash: HashPair;
}

/** The header `block` renders, whatever its content (`title` when the caller has it already). */
export function expectedHeader(block: ExpectedSection, title = headerTitle(block)): ExpectedHeader {
  // No object spread here: it is slow in V8 (Node 20), and a cold start checks every block.
  const shape: ParsedHeader = { title: asTwoByte(title), kind: block.kind };
  if (block.maxTokens) shape.maxTokens = block.maxTokens;
  const optional = block.kind === "readonly" && block.whenChanged !== "remind";
  return {
    label: block.label,
    shape,
    optional,
    hash: hashText(`${optional ? "?" : "!"}${headerShape(shape)}`),
  };
}

/**
 * The same text, held the way V8 holds a string with characters past U+00FF. A stored prompt with sections
 * always holds `═`, so V8 keeps it so too; a title kept the same way is compared with it as a block of
 * memory instead of character by character (`startsWith` about 4× faster on Node 20). Only the speed
 * differs: the characters, and so every comparison's answer, are the same.
 */
function asTwoByte(text: string): string {
  return `${text}\u2550`.slice(0, -1);
}

/**
 * Compares a stored prompt's section headers with the configuration, in order. Returns why they differ,
 * or `null` when the stored prompt could have been rendered from this configuration. Empty read-only
 * blocks are skipped when rendering, so those may be absent. A stored prompt with no sections at all (a
 * plain string written by another system) is taken as it is, unless it is empty and the configuration
 * now has a block that always renders.
 */
export function detectDrift(stored: string, expected: readonly ExpectedSection[]): string | null {
  return findDrift(
    stored,
    expected.map((block) => expectedHeader(block)),
  );
}

/**
 * `detectDrift` with the configuration's headers worked out beforehand. Walks the stored prompt's headers
 * in place (`HeaderScan`) and compares each where it lies (`headerHasShapeAt`): nothing is split or sliced
 * unless a header differs.
 */
export function findDrift(stored: string, expected: readonly ExpectedHeader[]): string | null {
  const scan = new HeaderScan(stored);
  let header = scan.next();
  if (!header && stored.trim().length > 0) return null;
  for (const block of expected) {
    if (header && headerHasShapeAt(stored, scan.start, scan.end, block.shape)) {
      header = scan.next();
      continue;
    }
    // Headers are quoted clipped: a long description would otherwise be warned in full on every wake.
    if (!block.optional)
      return `block "${clipped(block.label)}" is configured as "${clipped(headerShape(block.shape), 200)}" but the stored prompt does not have it`;
  }
  if (header)
    return `the stored prompt has a section "${clipped(stored.slice(scan.start, scan.end), 200)}" that the configuration does not`;
  return null;
}
