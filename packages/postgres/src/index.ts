export type { PostgresSource } from "./client.js";
export { createTables } from "./create-tables.js";
export {
  PostgresContextProvider,
  type PostgresContextProviderOptions,
} from "./postgres-context-provider.js";
export {
  PostgresSearchProvider,
  type PostgresSearchProviderOptions,
} from "./postgres-search-provider.js";
export {
  PostgresSessionProvider,
  type PostgresSessionProviderOptions,
} from "./postgres-session-provider.js";
export { POSTGRES_SCHEMA } from "./schema.js";
