export { AgentSessionProvider } from "./agent-session-provider.js";
export { createDurableContext, type DurableContextOptions } from "./durable-context.js";
export { defaultNewLayout, type NewSessionLayout } from "./session-schema.js";
export { type SqliteBackend, type SqliteBackendOptions, sqliteBackend } from "./sqlite-backend.js";
export {
  /** The name `agents/context` uses; the same class. */
  SqliteContextProvider as AgentContextProvider,
  SqliteContextProvider,
  type SqliteContextProviderOptions,
} from "./sqlite-context-provider.js";
export { SqliteRunStateStore, type SqliteRunStateStoreOptions } from "./sqlite-run-state-store.js";
export { SqliteSessionRegistry, type SqliteSessionRegistryOptions } from "./sqlite-session-registry.js";
export { SqliteSessionStore, type SqliteSessionStoreOptions } from "./sqlite-session-store.js";
export { SqliteSkillProvider, type SqliteSkillProviderOptions } from "./sqlite-skill-provider.js";
