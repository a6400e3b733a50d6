export type { EntryInput, SearchContextInput, SetContextInput, ToolOutcome } from "@contextblocks/core";
export type { RunState, RunStateStore, RunStates } from "@contextblocks/sessions";
export { InMemoryRunStateStore } from "@contextblocks/sessions/memory";
export type { ContextMessage } from "./messages.js";
export {
  type ContextBlocksRunProviderOptions,
  contextBlocksRunProvider,
} from "./pipeline/blocks-run-provider.js";
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
  type SessionRunProviderOptions,
  sessionRunProvider,
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
  type SessionHistoryOptions,
  SessionHistoryProvider,
  type SessionSource,
} from "./sessions/session-history-provider.js";
export { sessionSearchTool } from "./sessions/session-search-tool.js";
export { loadedSkillKeys, unloadSkill } from "./sessions/skills.js";
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
