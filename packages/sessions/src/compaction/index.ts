export { type CompactFunctionOptions, createCompactFunction } from "./create-compact-function.js";
export type {
  CompactAfterOptions,
  CompactContext,
  CompactFunction,
  CompactionErrorHandler,
  CompactOutcome,
  CompactResult,
  SessionTokenCounter,
  SessionTokenCounterInput,
} from "./types.js";
