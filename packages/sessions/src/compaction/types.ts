import type { ContextBlock } from "@contextblocks/core";
import type { SessionMessage } from "../message.js";

/** What a compaction function decides: summarise the messages `fromMessageId..toMessageId` as `summary`. */
export interface CompactResult {
  fromMessageId: string;
  toMessageId: string;
  summary: string;
}

/**
 * What `Session.compact()` did: the range it summarised (`compacted: true`, with the function's result), or
 * why it stored nothing (`compacted: false`): `"no-compaction-function"` (none registered: `onCompaction`)
 * or `"nothing-to-compact"` (the function returned `null`: too few messages outside the protected head and
 * the kept tail, or an empty summary). `message` says it in a sentence, with the figures.
 */
export type CompactOutcome =
  | (CompactResult & { compacted: true })
  | {
      compacted: false;
      reason: "no-compaction-function" | "nothing-to-compact";
      message: string;
    };

/** What `SessionTokenCounter` is given: the active path, the frozen prompt and the blocks behind it. */
export interface SessionTokenCounterInput {
  messages: SessionMessage[];
  systemPrompt: string;
  contextBlocks: ContextBlock[];
}

/** Counts the tokens a turn would send; decides when `compactAfter` compacts (and, by default, what). */
export type SessionTokenCounter = (input: SessionTokenCounterInput) => number | Promise<number>;

/** What the session passes to a compaction function: its token counter, when one is configured. */
export interface CompactContext {
  tokenCounter?: SessionTokenCounter | undefined;
}

/** A compaction function: the path root..leaf (overlays applied) in, a range and summary (or `null`) out. */
export type CompactFunction = (
  messages: SessionMessage[],
  context?: CompactContext,
) => Promise<CompactResult | null>;

/** Called when an automatic compaction fails; what it throws is ignored (the append already succeeded). */
export type CompactionErrorHandler = (error: unknown) => void | Promise<void>;

/** Options of `compactAfter`. */
export interface CompactAfterOptions {
  tokenCounter?: SessionTokenCounter | undefined;
}
