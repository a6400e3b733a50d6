export type { ContextMessage } from "./messages.js";
export {
  assertStablePrefix,
  type ComparePrefixOptions,
  comparePrefix,
  describePrefixComparison,
  type PrefixComparison,
  type PrefixSnapshot,
  type PrefixSource,
  prefixSnapshot,
} from "./prefix.js";
export {
  type PrepareContextTurnOptions,
  type PreparedContextTurn,
  prepareContextTurn,
} from "./prepare-turn.js";
export { attachReminder, isReminderText, reminderTargetIndex } from "./reminder-placement.js";
export {
  type ContextTool,
  type ContextToolInputSchemas,
  type ContextToolInputs,
  type ContextToolSet,
  type ContextToolsOptions,
  contextToolInputSchemas,
  contextTools,
  type EntryInput,
  type SearchContextInput,
  type SetContextInput,
} from "./tools.js";
export {
  loadedEntriesFromMessages,
  replaceUnloadedEntries,
  type UnloadOptions,
  unloadedPlaceholder,
} from "./unload.js";
