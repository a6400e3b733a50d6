export { startThrowawayCluster, type ThrowawayCluster, type ThrowawayClusterOptions } from "./cluster.js";
