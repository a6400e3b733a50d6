export type { PostgresSource } from "./client.js";
export { createTables } from "./create-tables.js";
export { type PostgresBackendOptions, postgresBackend } from "./postgres-backend.js";
export {
  PostgresContextProvider,
  type PostgresContextProviderOptions,
} from "./postgres-context-provider.js";
export { PostgresRunStateStore, type PostgresRunStateStoreOptions } from "./postgres-run-state-store.js";
export {
  PostgresSearchProvider,
  type PostgresSearchProviderOptions,
} from "./postgres-search-provider.js";
export {
  PostgresSessionRegistry,
  type PostgresSessionRegistryOptions,
} from "./postgres-session-registry.js";
export { PostgresSessionStore, type PostgresSessionStoreOptions } from "./postgres-session-store.js";
export { PostgresSkillProvider, type PostgresSkillProviderOptions } from "./postgres-skill-provider.js";
export { POSTGRES_SCHEMA } from "./schema.js";
