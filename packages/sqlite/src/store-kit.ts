/**
 * `@contextblocks/sqlite/store-kit`: the names of the tables this package creates (for tests and tools that
 * read them directly, and the agents drop-in), the schema set-up and the option types of each store.
 * Applications import the main entry; the tables are created on first use by what needs them.
 */

export { REGISTRY_TABLE as sessionsTable, RUN_STATE_TABLE as runStateTable } from "@contextblocks/sql-stores";
export {
  compactionsTable,
  defaultNewLayout,
  ensureSchema as ensureSessionSchema,
  leavesTable,
  messagesTable,
  type NewSessionLayout,
  searchTable,
} from "./session-schema.js";
export type { SqliteContextProviderOptions } from "./sqlite-context-provider.js";
export type { SqliteRunStateStoreOptions } from "./sqlite-run-state-store.js";
export type { SqliteSessionRegistryOptions } from "./sqlite-session-registry.js";
export type { SqliteSessionStoreOptions } from "./sqlite-session-store.js";
export type { SqliteSkillProviderOptions } from "./sqlite-skill-provider.js";

/** The blocks table, shaped as `agents/context` declares it. */
export const blocksTable = "cf_agents_context_blocks";
