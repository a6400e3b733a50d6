export { estimateMessageTokens } from "../message-tokens.js";
export { compactionPrefix, isCompactionMessage } from "../overlays.js";
export { alignBackward, alignForward, tailStart, unsafeCuts } from "./boundaries.js";
export { type CompactFunctionOptions, createCompactFunction } from "./create-compact-function.js";
export { buildSummaryPrompt, summarySections } from "./prompt.js";
export type {
  CompactAfterOptions,
  CompactContext,
  CompactFunction,
  CompactionErrorHandler,
  CompactResult,
  SessionTokenCounter,
  SessionTokenCounterInput,
} from "./types.js";
