export { DEFAULT_HISTORY_RETENTION, HISTORY_TABLE } from "./block-history.js";
export { checkNamespace, checkSqlLabel } from "./names.js";
export { FINGERPRINT_PART } from "./prompt-fingerprint.js";
export { type BlockStoreOptions, blockStoreOptions } from "./provider-options.js";
export { SKILL_HISTORY_TABLE } from "./skill-history.js";
export { SqlContextProvider, type SqlContextProviderOptions } from "./sql-context-provider.js";
export { SqlRunStateStore, type SqlRunStateStoreOptions } from "./sql-run-state-store.js";
export { SqlSessionRegistry, type SqlSessionRegistryOptions } from "./sql-session-registry.js";
export { SqlSkillProvider, type SqlSkillProviderOptions } from "./sql-skill-provider.js";
export {
  BLOCKS_TABLE,
  ensureTable,
  isMissingTable,
  missingTableError,
  REGISTRY_TABLE,
  RUN_STATE_TABLE,
  SCHEMA_LOCK,
  SKILLS_TABLE,
  type StoreTable,
  TableAccess,
  tableStatements,
} from "./tables.js";
export { checkStorable, unstorable } from "./text-checks.js";
