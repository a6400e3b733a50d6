export type { EntryInput, SearchContextInput, SetContextInput, ToolOutcome } from "@contextblocks/core";
export type { ContextMessage } from "./messages.js";
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
