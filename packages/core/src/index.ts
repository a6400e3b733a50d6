export {
  blockKindOf,
  hasMethod,
  isConditionalProvider,
  isHistoryProvider,
  isSearchProvider,
  isSkillProvider,
  isWritableProvider,
} from "./capabilities.js";
export type { ResolvedConfig } from "./config.js";
export {
  ContextBlocks,
  type ContextBlocksOptions,
  DEFAULT_HISTORY_LIMIT,
} from "./context-blocks.js";
export { describeValue, errorMessage } from "./describe-value.js";
export type { DriftPolicy } from "./drift.js";
export { applyEdit, countOccurrences } from "./edits.js";
export { entryId, type LoadedEntry } from "./entries.js";
export { ContextError, type ContextErrorCode, isContextError } from "./errors.js";
export type {
  BlockWriteAction,
  BlockWrittenEvent,
  ContextEvent,
  ContextListener,
  PromptFrozenEvent,
  PromptRefreshedEvent,
  ReminderSentEvent,
} from "./events.js";
export { SYSTEM_PROMPT_LABEL } from "./frozen-prompt.js";
export { entryKey } from "./keys.js";
export {
  labelOfHeader,
  type ParsedSection,
  parseSections,
  REMINDER_PREAMBLE,
  renderPrompt,
  renderSection,
  SECTION_RULE,
  usagePercent,
} from "./prompt-format.js";
export {
  checkLabel,
  checkNamespace,
  checkRowLabel,
  type LabelCheckOptions,
  loneSurrogateProblem,
  NAMESPACE_MARK,
  namespacePrefix,
  namespaceProblem,
  rowLabel,
  type UnstorableText,
} from "./row-label.js";
export { estimateTokens, type TokenCounter } from "./tokens.js";
export type { EditContextInput } from "./tools/edit-context.js";
export type { JsonSchema } from "./tools/fields.js";
export type { WriteOptions } from "./tools/host.js";
export type { EntryInput } from "./tools/load-context.js";
export type { SearchContextInput } from "./tools/search-context.js";
export type { SetContextInput } from "./tools/set-context.js";
export type {
  ContextToolName,
  ContextToolSpec,
  ToolCall,
  ToolOptions,
  ToolOutcome,
} from "./tools/spec.js";
export {
  type ContextTracer,
  capturesContent,
  GEN_AI,
  getContextTracer,
  setContextTracer,
  sha256Hex,
  type TraceAttributes,
  type TraceAttributeValue,
  type TraceSpan,
  traced,
} from "./tracing.js";
export type {
  AnyContextProvider,
  BlockKind,
  BlockVersion,
  BlockWrite,
  ConditionalContextProvider,
  ContextBlock,
  ContextConfig,
  ContextProvider,
  HistoryProvider,
  HistoryQuery,
  SearchProvider,
  SkillProvider,
  SyncReadableProvider,
  WhenChanged,
  WritableContextProvider,
  WriteSource,
} from "./types.js";
export { assertWellFormed, isWellFormed, loneSurrogateIndex } from "./well-formed.js";
