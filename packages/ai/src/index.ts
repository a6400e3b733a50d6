export type { EntryInput, SearchContextInput, SetContextInput, ToolOutcome } from "@contextblocks/core";
export type { ContextMessage } from "./messages.js";
export {
  type ContextBlocksRunProviderOptions,
  contextBlocksRunProvider,
} from "./pipeline/blocks-run-provider.js";
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
  type HistoryProvider,
  type InMemoryHistoryOptions,
  InMemoryHistoryProvider,
  isHistoryProvider,
} from "./pipeline/history-provider.js";
export type { RunMessage } from "./pipeline/model-types.js";
export { messageText } from "./pipeline/run-messages.js";
export type { MessageTransform, RunContext, RunContextProvider } from "./pipeline/run-provider.js";
export {
  InMemoryRunStateStore,
  type RunState,
  type RunStateStore,
  type RunStates,
} from "./pipeline/run-state.js";
export {
  type PrepareContextTurnOptions,
  type PreparedContextTurn,
  prepareContextTurn,
} from "./prepare-turn.js";
export { attachReminder, isReminderPart } from "./reminder-placement.js";
export {
  type ContextTool,
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
