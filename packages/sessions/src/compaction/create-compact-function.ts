import { ContextError } from "@contextblocks/core";
import { describeValue } from "@contextblocks/core/store-kit";
import type { SessionMessage } from "../message.js";
import { estimateMessageTokens } from "../message-tokens.js";
import { compactionRangeOf } from "../overlays.js";
import { alignBackward, alignForward, tailStart, unsafeCuts } from "./boundaries.js";
import { buildSummaryPrompt } from "./prompt.js";
import type { CompactContext, CompactFunction, CompactResult } from "./types.js";

/** Options of `createCompactFunction`. */
export interface CompactFunctionOptions {
  /** Turns the prompt into the summary (usually `generateText(...).then((result) => result.text)`). */
  summarize: (prompt: string) => Promise<string>;
  /** The first messages are never compacted. Default 3. */
  protectHead?: number;
  /** Newest messages kept as they are, up to this many tokens. Default 20,000. */
  tailTokenBudget?: number;
  /** At least this many newest messages are kept, whatever their size. Default 2. */
  minTailMessages?: number;
  /** Counts a message list's tokens; default: the session's counter, else core's estimate. */
  tokenCounter?: (messages: SessionMessage[]) => number | Promise<number>;
}

/**
 * A compaction function for `Session.onCompaction`: keeps the head and a token-budgeted tail, moves both
 * cuts so no tool call is separated from its result, and asks `summarize` for a structured summary of the
 * middle. When the middle holds an earlier summary, the model updates it and the new overlay covers the
 * earlier range too, so one summary stands for everything compacted so far.
 */
export function createCompactFunction(options: CompactFunctionOptions): CompactFunction {
  if (typeof options?.summarize !== "function") {
    throw new ContextError("INVALID_CONFIG", "createCompactFunction: summarize must be a function");
  }
  const protectHead = whole(options.protectHead ?? 3, "protectHead");
  const tailTokenBudget = whole(options.tailTokenBudget ?? 20_000, "tailTokenBudget");
  const minTailMessages = whole(options.minTailMessages ?? 2, "minTailMessages");
  return async (messages: SessionMessage[], context?: CompactContext): Promise<CompactResult | null> => {
    if (messages.length <= protectHead + minTailMessages) return null;
    const count = messageCounter(options, context);
    const unsafe = unsafeCuts(messages);
    const start = alignForward(unsafe, protectHead, messages.length);
    const tail = await tailStart(messages, start, tailTokenBudget, minTailMessages, count);
    const end = alignBackward(unsafe, tail);
    if (end <= start) return null;
    const middle = messages.slice(start, end);
    const summaries = middle.filter((message) => compactionRangeOf(message) !== null);
    const fresh = middle.filter((message) => compactionRangeOf(message) === null);
    const first = fresh[0];
    const last = fresh[fresh.length - 1];
    if (first === undefined || last === undefined) return null;
    const previous = summaries[0];
    const previousRange = previous === undefined ? null : compactionRangeOf(previous);
    const previousText = previous === undefined ? null : textOf(previous);
    const budget = Math.max(100, Math.floor(estimateMessageTokens(fresh) * 0.2));
    const summary: unknown = await options.summarize(buildSummaryPrompt(fresh, previousText, budget));
    if (typeof summary !== "string") {
      // Silently skipping hid a summarize that returns the AI SDK's result object: compaction never ran.
      throw new ContextError(
        "INVALID_INPUT",
        `createCompactFunction: summarize must resolve to the summary text, a string, got ${describeValue(summary)} (with the AI SDK: generateText(…).then((result) => result.text)); nothing was compacted`,
      );
    }
    if (summary.trim().length === 0) return null;
    checkSummarySize(summary, middle, budget);
    return {
      // Widen over the earlier overlay when it opens the middle: the updated summary replaces it.
      fromMessageId:
        previous === middle[0] && previousRange !== null ? previousRange.fromMessageId : first.id,
      toMessageId: last.id,
      summary,
    };
  };
}

/**
 * A summary must shrink what it replaces: one longer than both the messages it stands for and the budget it was
 * asked for (a model echoing its prompt, a runaway answer) would grow the history at every compaction, each
 * summary holding the last; it is refused, and nothing is stored.
 */
function checkSummarySize(summary: string, replaced: readonly SessionMessage[], budget: number): void {
  const summaryTokens = estimateMessageTokens([
    { id: "", role: "assistant", parts: [{ type: "text", text: summary }] },
  ]);
  const replacedTokens = estimateMessageTokens(replaced);
  if (summaryTokens > budget && summaryTokens >= replacedTokens) {
    throw new ContextError(
      "INVALID_INPUT",
      `createCompactFunction: the summary (about ${summaryTokens} tokens) is no shorter than the ${replaced.length} messages it would replace (about ${replacedTokens} tokens; the prompt asked for at most ${budget}); nothing was compacted`,
    );
  }
}

function messageCounter(
  options: CompactFunctionOptions,
  context: CompactContext | undefined,
): (message: SessionMessage) => number | Promise<number> {
  const own = options.tokenCounter;
  if (own !== undefined) return (message) => own([message]);
  const session = context?.tokenCounter;
  if (session !== undefined) {
    return (message) => session({ messages: [message], systemPrompt: "", contextBlocks: [] });
  }
  return (message) => estimateMessageTokens([message]);
}

function textOf(message: SessionMessage): string {
  return message.parts
    .flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : []))
    .join("\n");
}

function whole(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new ContextError(
      "INVALID_CONFIG",
      `createCompactFunction: ${name} must be a whole number ≥ 0, got ${value}`,
    );
  }
  return value;
}
