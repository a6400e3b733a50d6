export type { EntryInput, SearchContextInput, SetContextInput, ToolOutcome } from "@contextblocks/core";
export type { RunState, RunStateStore, RunStates } from "@contextblocks/sessions";
export { InMemoryRunStateStore } from "@contextblocks/sessions/memory";
export type { ContextMessage } from "./messages.js";
export {
  type ContextBlocksPluginOptions,
  contextBlocksPlugin,
} from "./pipeline/blocks-plugin.js";
export { type CacheHintOptions, promptCacheKey } from "./pipeline/cache-hints.js";
export {
  type ContextMiddleware,
  type ContextMiddlewareOptions,
  contextMiddleware,
} from "./pipeline/context-middleware.js";
export {
  type ContextPipeline,
  type ContextPipelineOptions,
  contextPipeline,
} from "./pipeline/context-pipeline.js";
export {
  type HistoryCall,
  type HistoryOptions,
  type HistoryPlugin,
  type InMemoryHistoryOptions,
  InMemoryHistoryPlugin,
  isHistoryPlugin,
} from "./pipeline/history-plugin.js";
export type { RunMessage } from "./pipeline/model-types.js";
export type { CallContext, ContextPlugin, MessageTransform } from "./pipeline/plugin.js";
export { messageText } from "./pipeline/run-messages.js";
export {
  type SessionRunProviderOptions,
  sessionPlugin,
} from "./pipeline/session-plugin.js";
export {
  type PrepareContextTurnOptions,
  type PreparedContextTurn,
  prepareContextTurn,
} from "./prepare-turn.js";
export { attachReminder, isReminderPart } from "./reminder-placement.js";
export { runMessagesOf, verbatimPartType } from "./sessions/run-message-decoding.js";
export { toSessionMessage, withToolResults } from "./sessions/run-message-encoding.js";
export {
  type ExcerptTurn,
  type SearchExcerptOptions,
  type SearchExcerpts,
  searchExcerpts,
} from "./sessions/search-excerpts.js";
export {
  type SessionHistoryOptions,
  SessionHistoryPlugin,
  type SessionSource,
} from "./sessions/session-history-plugin.js";
export { sessionSearchTool } from "./sessions/session-search-tool.js";
export { loadedSkillKeys, unloadSkill } from "./sessions/skills.js";
export {
  type ContextTool,
  type ContextToolCallOptions,
  type ContextToolInputSchemas,
  type ContextToolInputs,
  type ContextToolSet,
  type ContextToolsOptions,
  contextToolInputSchemas,
  contextTools,
  toolOutcomeOf,
} from "./tools.js";
export {
  loadedEntriesFromMessages,
  replaceUnloadedEntries,
  type UnloadOptions,
  unloadedPlaceholder,
} from "./unload.js";
