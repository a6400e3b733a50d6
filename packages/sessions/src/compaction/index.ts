export { type CompactFunctionOptions, createCompactFunction } from "./create-compact-function.js";
export type {
  CompactAfterOptions,
  CompactContext,
  CompactFunction,
  CompactionErrorHandler,
  CompactResult,
  SessionTokenCounter,
  SessionTokenCounterInput,
} from "./types.js";
