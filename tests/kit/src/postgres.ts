export { provideThrowawayCluster } from "./cluster-setup.js";
export { createTestSchema, type TestSchema } from "./test-schema.js";
export {
  startThrowawayCluster,
  type ThrowawayCluster,
  type ThrowawayClusterOptions,
} from "./throwaway-cluster.js";
