export {
  acceptsWrites,
  blockKindOf,
  isReadableProvider,
  isSearchProvider,
  isSkillProvider,
  isWritableProvider,
} from "./capabilities.js";
export type { ResolvedConfig } from "./config.js";
export {
  ContextBlocks,
  type ContextBlocksOptions,
  type LoadedEntry,
  SYSTEM_PROMPT_LABEL,
} from "./context-blocks.js";
export { type DriftPolicy, detectDrift } from "./drift.js";
export { ContextError, type ContextErrorCode, isContextError } from "./errors.js";
export { entryKey } from "./keys.js";
export { REMINDER_PREAMBLE, renderReminder } from "./reminder.js";
export {
  neutralizeContent,
  renderHeader,
  renderPrompt,
  renderSection,
  renderUsage,
  SECTION_RULE,
  usagePercent,
} from "./render.js";
export { type ParsedSection, parseSections } from "./sections.js";
export { estimateTokens, type TokenCounter } from "./tokens.js";
export { buildToolSpecs } from "./tools/build.js";
export type { ContextToolName, ContextToolSpec, JsonSchema, ToolOptions } from "./tools/spec.js";
export type {
  AnyContextProvider,
  BlockKind,
  ContextBlock,
  ContextConfig,
  ContextProvider,
  SearchProvider,
  SkillProvider,
  WhenChanged,
  WritableContextProvider,
} from "./types.js";
