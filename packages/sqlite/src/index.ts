export { createDurableContext, type DurableContextOptions } from "./durable-context.js";
export {
  /** The name `agents/context` uses; the same class. */
  SqliteContextProvider as AgentContextProvider,
  SqliteContextProvider,
  type SqliteContextProviderOptions,
} from "./sqlite-context-provider.js";
export { SqliteSkillProvider, type SqliteSkillProviderOptions } from "./sqlite-skill-provider.js";
export { NAMESPACE_MARK, rowLabel } from "./storage-key.js";
