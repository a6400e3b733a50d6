export { createDurableContext, type DurableContextOptions } from "./durable-context.js";
export { CREATE_SKILL_TABLE, isMissingSkillTableError, SKILL_TABLE_NAME } from "./skill-table.js";
export {
  /** The name `agents/context` uses; the same class. */
  SqliteContextProvider as AgentContextProvider,
  SqliteContextProvider,
  type SqliteContextProviderOptions,
} from "./sqlite-context-provider.js";
export { SqliteSkillProvider, type SqliteSkillProviderOptions } from "./sqlite-skill-provider.js";
export { NAMESPACE_MARK, storageKey } from "./storage-key.js";
export { CREATE_TABLE, isMissingTableError, TABLE_NAME } from "./table.js";
