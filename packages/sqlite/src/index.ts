// What applications use. Table names and helpers for tools that read the tables are in `./store-kit`.
export { createDurableContext, type DurableContextOptions } from "./durable-context.js";
export { type SqliteBackend, type SqliteBackendOptions, sqliteBackend } from "./sqlite-backend.js";
export { SqliteContextProvider } from "./sqlite-context-provider.js";
export { SqliteRunStateStore } from "./sqlite-run-state-store.js";
export { SqliteSessionRegistry } from "./sqlite-session-registry.js";
export { SqliteSessionStore } from "./sqlite-session-store.js";
export { SqliteSkillProvider } from "./sqlite-skill-provider.js";
