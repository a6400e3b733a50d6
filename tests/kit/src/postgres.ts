export { AGENTS_MESSAGES_TABLE, AGENTS_POSTGRES_TABLES } from "./agents-postgres-tables.js";
export { provideThrowawayCluster } from "./cluster-setup.js";
export { createTestSchema, type TestSchema } from "./test-schema.js";
export {
  startThrowawayCluster,
  type ThrowawayCluster,
  type ThrowawayClusterOptions,
} from "./throwaway-cluster.js";
