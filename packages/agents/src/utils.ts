/**
 * Cloudflare agents' compaction helpers (`agents/experimental/memory/utils`) under their agents@0.22.0
 * names, over `@contextblocks/sessions/compaction`: change the import to
 * `@contextblocks/agents/experimental/memory/utils`.
 */
import { estimateTokens } from "@contextblocks/core";
import type { SessionMessage, SessionMessagePart } from "@contextblocks/sessions";
import { estimateMessageTokens } from "@contextblocks/sessions";
import type { CompactFunctionOptions } from "@contextblocks/sessions/compaction";
import {
  alignBackward,
  alignForward,
  buildSummaryPrompt as buildSessionsSummaryPrompt,
  compactionPrefix,
  unsafeCuts,
} from "@contextblocks/sessions/store-kit";

export { estimateMessageTokens, isCompactionMessage } from "@contextblocks/sessions";
export { type CompactResult, createCompactFunction } from "@contextblocks/sessions/compaction";

/** agents' name for `compactionPrefix`: overlay messages' ids start with it. */
export const COMPACTION_PREFIX = compactionPrefix;
/** agents' name for `createCompactFunction`'s options. */
export type CompactOptions = CompactFunctionOptions;
/** agents' token counter of `createCompactFunction`: tokens of a message list. */
export type CompactTokenCounter = (messages: SessionMessage[]) => number | Promise<number>;

/** Framing tokens per message, as agents' and contextblocks' estimates add them. */
export const TOKENS_PER_MESSAGE = 4;
/** agents' characters-per-token constant, kept for code that imports it (contextblocks counts runs). */
export const CHARS_PER_TOKEN = 4;
/** agents' tokens-per-word constant, kept for code that imports it (contextblocks counts runs). */
export const WORDS_TOKEN_MULTIPLIER = 1.3;

/** Estimated tokens of a string: core's `estimateTokens` (agents: the larger of characters/4 and words×1.3). */
export function estimateStringTokens(text: string): number {
  return estimateTokens(text);
}

/** The first cut at or after `index` that does not separate a tool call from its result. */
export function alignBoundaryForward(messages: SessionMessage[], index: number): number {
  if (index <= 0 || index >= messages.length) return index;
  return alignForward(unsafeCuts(messages), index, messages.length);
}

/** The last cut at or before `index` that does not separate a tool call from its result. */
export function alignBoundaryBackward(messages: SessionMessage[], index: number): number {
  if (index <= 0 || index >= messages.length) return index;
  return alignBackward(unsafeCuts(messages), index);
}

/**
 * Where the protected tail starts: the newest messages within `tailTokenBudget` tokens, at least
 * `minTailMessages` of them, never before `headEnd`, moved back so no tool call loses its result.
 */
export function findTailCutByTokens(
  messages: SessionMessage[],
  headEnd: number,
  tailTokenBudget = 20_000,
  minTailMessages = 2,
): number {
  let start = messages.length;
  let used = 0;
  while (start > headEnd) {
    const tokens = estimateMessageTokens([messages[start - 1] as SessionMessage]);
    if (messages.length - start >= minTailMessages && used + tokens > tailTokenBudget) break;
    used += tokens;
    start--;
  }
  return alignBoundaryBackward(messages, start);
}

/** A summary's token budget: a fifth of the summarized messages' tokens, at least 100. */
export function computeSummaryBudget(messages: SessionMessage[]): number {
  return Math.max(100, Math.floor(estimateMessageTokens(messages) * 0.2));
}

/** The structured summary prompt `createCompactFunction` sends (updating `previousSummary` when given). */
export function buildSummaryPrompt(
  messages: SessionMessage[],
  previousSummary: string | null,
  budget: number,
): string {
  return buildSessionsSummaryPrompt(messages, previousSummary, budget);
}

const stubResult = "[Result from earlier conversation — see context summary above]";

function isToolPart(part: SessionMessagePart): boolean {
  return part.type.startsWith("tool-") || part.type === "dynamic-tool";
}

function hasOutput(part: SessionMessagePart): boolean {
  return isToolPart(part) && typeof part.toolCallId === "string" && ("output" in part || "result" in part);
}

/**
 * Repairs tool pairs after messages were dropped: a result whose call is gone is removed, and a call whose
 * result is gone gets a stub result after its message, so providers accept the history. Returns new arrays;
 * messages left without parts are dropped.
 */
export function sanitizeToolPairs(messages: SessionMessage[]): SessionMessage[] {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const message of messages) {
    for (const part of message.parts) {
      if (!isToolPart(part) || typeof part.toolCallId !== "string") continue;
      if (message.role === "assistant") calls.add(part.toolCallId);
      if (hasOutput(part)) results.add(part.toolCallId);
    }
  }
  const out: SessionMessage[] = [];
  for (const message of messages) {
    const parts = message.parts.filter((part) => !(hasOutput(part) && !calls.has(part.toolCallId as string)));
    if (parts.length > 0) out.push(parts.length === message.parts.length ? message : { ...message, parts });
    if (message.role !== "assistant") continue;
    for (const part of message.parts) {
      const id = part.toolCallId;
      if (!isToolPart(part) || typeof id !== "string" || results.has(id)) continue;
      results.add(id);
      out.push({
        id: `stub-${id}`,
        role: "assistant",
        parts: [
          { type: "tool-result", toolCallId: id, toolName: part.toolName ?? "unknown", result: stubResult },
        ],
      } as SessionMessage);
    }
  }
  return out;
}

/** Options of `truncateOlderMessages`. */
export interface TruncateOptions {
  /** Newest messages left whole. Default 4. */
  keepRecent?: number;
  /** Older tool outputs longer than this many characters are cut. Default 500. */
  maxToolOutputChars?: number;
  /** Older text parts longer than this many characters are cut. Default 10,000. */
  maxTextChars?: number;
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… [truncated ${text.length - limit} chars]`;
}

function cutOutput(output: unknown, limit: number): unknown {
  if (typeof output === "string") return cut(output, limit);
  if (Array.isArray(output)) return output.map((item) => cutOutput(item, limit));
  if (output !== null && typeof output === "object") {
    return Object.fromEntries(Object.entries(output).map(([key, value]) => [key, cutOutput(value, limit)]));
  }
  return output;
}

/**
 * A copy of `messages` for the model in which every message but the newest `keepRecent` has long text and
 * tool outputs cut (structured outputs keep their shape). Stored messages are not changed.
 */
export function truncateOlderMessages(
  messages: SessionMessage[],
  options?: TruncateOptions,
): SessionMessage[] {
  const keepRecent = options?.keepRecent ?? 4;
  const maxToolOutput = options?.maxToolOutputChars ?? 500;
  const maxText = options?.maxTextChars ?? 10_000;
  if (messages.length <= keepRecent) return messages;
  const cutoff = messages.length - keepRecent;
  return messages.map((message, index) => {
    if (index >= cutoff) return message;
    let changed = false;
    const parts = message.parts.map((part) => {
      if (isToolPart(part) && part.output !== undefined) {
        const output = cutOutput(part.output, maxToolOutput);
        if (JSON.stringify(output) !== JSON.stringify(part.output)) {
          changed = true;
          return { ...part, output };
        }
      }
      if (part.type === "text" && typeof part.text === "string" && part.text.length > maxText) {
        changed = true;
        return { ...part, text: cut(part.text, maxText) };
      }
      return part;
    });
    return changed ? { ...message, parts } : message;
  });
}
