/**
 * The names of the tables this package creates, for tests and tools that read them directly
 * (`@contextblocks/sqlite/schema`). The tables are created on first use by what needs them.
 */

export { REGISTRY_TABLE as sessionsTable, RUN_STATE_TABLE as runStateTable } from "@contextblocks/sql-stores";
export {
  compactionsTable,
  ensureSchema as ensureSessionSchema,
  leavesTable,
  messagesTable,
  searchTable,
} from "./session-schema.js";

/** The blocks table, shaped as `agents/context` declares it. */
export const blocksTable = "cf_agents_context_blocks";
