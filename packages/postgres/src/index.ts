// What applications use. The DDL and the option types of each store are in `./store-kit`.
export type { PostgresSource } from "./client.js";
export { createTables } from "./create-tables.js";
export { type PostgresBackendOptions, postgresBackend } from "./postgres-backend.js";
export { PostgresContextProvider } from "./postgres-context-provider.js";
export { PostgresRunStateStore } from "./postgres-run-state-store.js";
export { PostgresSearchProvider } from "./postgres-search-provider.js";
export { PostgresSessionRegistry } from "./postgres-session-registry.js";
export { PostgresSessionStore } from "./postgres-session-store.js";
export { PostgresSkillProvider } from "./postgres-skill-provider.js";
