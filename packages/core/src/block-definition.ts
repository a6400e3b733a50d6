import { describeValue } from "./describe-value.js";
import { type ExpectedHeader, expectedHeader } from "./drift.js";
import { ContextError } from "./errors.js";
import { isOneLine } from "./prompt-format.js";
import type { BlockKind, ContextConfig, WhenChanged } from "./types.js";

/**
 * A name a header shows (an upper-cased label, a header title), one object per distinct text among the
 * cached definitions, so two blocks that would render the same header share it: a configuration's clash
 * check marks each block's names once (`ClashMarks`) instead of hashing every name into a set per instance.
 */
export interface HeaderName {
  /**
   * The name in Unicode's composed form (NFC): spellings that differ only in form ("é" as one character or
   * as "e" and a combining accent) look the same to a reader, so they are one name to the clash check.
   */
  readonly text: string;
  /** The clash check that marked this name last (see `ClashMarks`). */
  mark: number;
}

/**
 * What a block config says apart from its provider (label, description, limit, `whenChanged`), checked
 * once and shared by every `ContextBlocks` built from the same values: a Durable Object wakes often with the
 * same configuration, and checking and deriving the same header texts on every wake is what made a cold
 * start slower than `agents/context`'s (see docs/wake-cost.md).
 */
export interface BlockDefinition {
  readonly label: string;
  /** The description as rendered: absent when empty. */
  readonly description: string | undefined;
  readonly maxTokens: number | undefined;
  readonly whenChanged: WhenChanged;
  readonly upper: HeaderName;
  readonly title: HeaderName;
  /** The header title as rendered: the upper-cased label and description as written, not composed. */
  readonly shownTitle: string;
  /** The header drift detection expects, per kind (the kind comes from each instance's provider). */
  readonly headers: Partial<Record<BlockKind, ExpectedHeader>>;
  /** The config's own values, compared on a cache hit (`description: ""` and none are distinct inputs). */
  readonly input: {
    readonly description: unknown;
    readonly maxTokens: unknown;
    readonly whenChanged: unknown;
  };
}

/**
 * Past this many distinct labels the cache starts again (labels made per user or per session would
 * otherwise keep growing it). A cleared cache costs one validation per block, never a wrong answer.
 */
const CACHE_LIMIT = 2_048;

const definitions = new Map<string, BlockDefinition>();
/** Upper-cased labels and header titles are two sets of names: only names of one set can clash. */
const upperNames = new Map<string, HeaderName>();
const titleNames = new Map<string, HeaderName>();
/** Counts the clears, so a clash check that spans one can tell its names may not be shared. */
let generation = 0;

/** How many times the cache was cleared (for a clash check to notice a clear in the middle of it). */
export function definitionGeneration(): number {
  return generation;
}

function headerName(names: Map<string, HeaderName>, text: string): HeaderName {
  let name = names.get(text);
  if (name === undefined) {
    name = { text, mark: 0 };
    names.set(text, name);
  }
  return name;
}

/**
 * The checked definition of `config` (throws `INVALID_CONFIG` naming the problem), from the cache when a
 * config with the same label, description, limit and `whenChanged` was checked before. Every value the
 * checks read is compared, so a hit answers exactly what checking again would.
 */
export function blockDefinition(config: ContextConfig): BlockDefinition {
  if (typeof config !== "object" || config === null) {
    throw new ContextError(
      "INVALID_CONFIG",
      `A block config must be an object, got ${describeValue(config)}`,
    );
  }
  const { label, description, maxTokens, whenChanged } = config;
  if (typeof label === "string") {
    const cached = definitions.get(label);
    if (
      cached !== undefined &&
      cached.input.description === description &&
      cached.input.maxTokens === maxTokens &&
      cached.input.whenChanged === whenChanged
    ) {
      return cached;
    }
  }
  const definition = checkDefinition(label, description, maxTokens, whenChanged);
  if (definitions.size >= CACHE_LIMIT) {
    definitions.clear();
    upperNames.clear();
    titleNames.clear();
    generation += 1;
  }
  definitions.set(definition.label, definition);
  return definition;
}

/** The header a block of this definition and `kind` renders, whatever its content (built once per kind). */
export function definitionHeader(definition: BlockDefinition, kind: BlockKind): ExpectedHeader {
  let header = definition.headers[kind];
  if (header === undefined) {
    header = expectedHeader(
      {
        label: definition.label,
        ...(definition.description ? { description: definition.description } : {}),
        ...(definition.maxTokens !== undefined ? { maxTokens: definition.maxTokens } : {}),
        kind,
        whenChanged: definition.whenChanged,
      },
      definition.shownTitle,
    );
    definition.headers[kind] = header;
  }
  return header;
}

function checkDefinition(
  label: unknown,
  description: unknown,
  maxTokens: unknown,
  whenChanged: unknown,
): BlockDefinition {
  if (typeof label !== "string" || label.trim().length === 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `A block label must be a non-empty string, got ${describeValue(label)}`,
    );
  }
  if (label !== label.trim() || !isOneLine(label) || label.includes("═")) {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block label ${JSON.stringify(label)} must not have surrounding spaces, control characters, line breaks or "═"`,
      { label },
    );
  }
  if (description !== undefined && (typeof description !== "string" || !isOneLine(description))) {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block "${label}": description must be a single-line string without control characters`,
      { label },
    );
  }
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || (maxTokens as number) <= 0)) {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block "${label}": maxTokens must be a positive integer, got ${describeValue(maxTokens)}`,
      { label },
    );
  }
  if (whenChanged !== undefined && whenChanged !== "wait" && whenChanged !== "remind") {
    throw new ContextError(
      "INVALID_CONFIG",
      `Block "${label}": whenChanged must be "wait" or "remind", got ${describeValue(whenChanged)}`,
      { label },
    );
  }
  const upper = label.toUpperCase();
  const shown = (description as string | undefined) || undefined;
  const shownTitle = shown ? `${upper} (${shown})` : upper;
  return {
    label,
    description: shown,
    maxTokens: maxTokens as number | undefined,
    whenChanged: (whenChanged as WhenChanged | undefined) ?? "wait",
    upper: headerName(upperNames, composedForm(upper)),
    title: headerName(titleNames, composedForm(shownTitle)),
    shownTitle,
    headers: {},
    input: { description, maxTokens, whenChanged },
  };
}

/** `text` in Unicode's composed form (NFC); ASCII, the common case, is already in it. */
export function composedForm(text: string): string {
  return /^[\u0000-\u007f]*$/.test(text) ? text : text.normalize("NFC");
}
