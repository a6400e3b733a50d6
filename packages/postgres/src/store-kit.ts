/**
 * `@contextblocks/postgres/store-kit`: the DDL of every table (`POSTGRES_SCHEMA`, also shipped as
 * `schema.sql`), the option types of each store and the session search's default ranking, for tools, bench
 * and the agents drop-in. Applications import the main entry.
 */
export type { PostgresContextProviderOptions } from "./postgres-context-provider.js";
export type { PostgresRunStateStoreOptions } from "./postgres-run-state-store.js";
export type { PostgresSearchProviderOptions } from "./postgres-search-provider.js";
export { defaultPostgresSearchRanking } from "./postgres-search-ranking.js";
export type { PostgresSessionRegistryOptions } from "./postgres-session-registry.js";
export type { PostgresSessionStoreOptions } from "./postgres-session-store.js";
export type { PostgresSkillProviderOptions } from "./postgres-skill-provider.js";
export { POSTGRES_SCHEMA } from "./schema.js";
