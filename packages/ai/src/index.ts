export { memoryTool } from "./memory-tool/memory-tool.js";
export { contextBlocksPlugin } from "./pipeline/blocks-plugin.js";
export { promptCacheKey } from "./pipeline/cache-hints.js";
export { contextMiddleware } from "./pipeline/context-middleware.js";
export {
  type ContextPipeline,
  contextPipeline,
} from "./pipeline/context-pipeline.js";
export {
  type HistoryCall,
  type HistoryPlugin,
  InMemoryHistoryPlugin,
  isHistoryPlugin,
} from "./pipeline/history-plugin.js";
export type { RunMessage } from "./pipeline/model-types.js";
export type { CallContext, ContextPlugin } from "./pipeline/plugin.js";
export { messageText } from "./pipeline/run-messages.js";
export { sessionPlugin } from "./pipeline/session-plugin.js";
export { prepareContextTurn } from "./prepare-turn.js";
export { attachReminder, isReminderPart } from "./reminder-placement.js";
export { runMessagesOf, verbatimPartType } from "./sessions/run-message-decoding.js";
export { toSessionMessage, withToolResults } from "./sessions/run-message-encoding.js";
export { searchExcerpts } from "./sessions/search-excerpts.js";
export { SessionHistoryPlugin } from "./sessions/session-history-plugin.js";
export { sessionSearchTool } from "./sessions/session-search-tool.js";
export { loadedSkillKeys, unloadSkill } from "./sessions/skills.js";
export {
  type ContextTool,
  type ContextToolCallOptions,
  type ContextToolSet,
  contextToolInputSchemas,
  contextTools,
  toolOutcomeOf,
} from "./tools.js";
export {
  loadedEntriesFromMessages,
  replaceUnloadedEntries,
  unloadedPlaceholder,
} from "./unload.js";
