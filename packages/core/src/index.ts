// What applications use. Helpers for authors of providers, backends and adapters are in `./store-kit`.
export { ContextBlocks, type ContextBlocksOptions } from "./context-blocks.js";
export { ContextError, type ContextErrorCode, isContextError } from "./errors.js";
export type { ContextEvent, ContextListener } from "./events.js";
export { SYSTEM_PROMPT_LABEL } from "./frozen-prompt.js";
export { entryKey } from "./keys.js";
export {
  parseSections,
  REMINDER_PREAMBLE,
  renderPrompt,
  renderSection,
  usagePercent,
} from "./prompt-format.js";
export { estimateTokens, type TokenCounter } from "./tokens.js";
export type { JsonSchema } from "./tools/fields.js";
export type { ContextToolSpec, ToolCall, ToolOutcome } from "./tools/spec.js";
export {
  type ContextTracer,
  setContextTracer,
  type TraceAttributes,
  type TraceAttributeValue,
  type TraceSpan,
} from "./tracing.js";
export type {
  BlockKind,
  BlockVersion,
  BlockWrite,
  ConditionalContextProvider,
  ContextBlock,
  ContextConfig,
  ContextProvider,
  EntryVersionQuery,
  SearchProvider,
  SkillProvider,
  VersionedProvider,
  VersionedSkillProvider,
  VersionQuery,
  WhenChanged,
  WritableContextProvider,
} from "./types.js";
