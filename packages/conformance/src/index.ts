export {
  ADVERSARIAL_TEXTS,
  type AdversarialText,
  INVISIBLE_CHARACTERS,
  LINE_BREAKS,
} from "./adversarial.js";
export { describeSessionBackend } from "./backend-suite.js";
export type { ContractSuiteOptions } from "./contract-suite.js";
export {
  describeCapabilityDeclaration,
  describeContextProvider,
  describeEntryVersions,
  describeLoadable,
  describeNamespacing,
  describeReadable,
  describeSearchable,
  describeThroughContextBlocks,
  describeVersions,
  describeWritable,
} from "./describe-context-provider.js";
export {
  describeSessionContent,
  describeSessionIsolation,
  describeSessionOverlays,
  describeSessionPathReads,
  describeSessionStore,
  describeSessionStoredIds,
  describeSessionStoreV1,
  describeSessionTree,
} from "./describe-session-store.js";
export { HOSTILE_QUERIES, type HostileQuery } from "./hostile-queries.js";
export type { ConformanceCapabilities, ConformanceOptions, ProviderFactory } from "./options.js";
export { describeSessionRegistry } from "./registry-suite.js";
export { type CallRunner, routeProviderCalls } from "./route-calls.js";
export { describeRunStateStore } from "./run-state-suite.js";
export { checkSessionHistoryAndFeed, type SessionUnderTest } from "./session-feed.js";
export type {
  ConformanceMessage,
  ConformanceNode,
  ConformanceSearchHit,
  SessionConformanceCapabilities,
  SessionConformanceOptions,
  SessionStoreFactory,
  SessionStoreUnderTest,
} from "./session-options.js";
export { conformanceRecord, type SessionStorageOptions } from "./session-storage.js";
export {
  type CompactingSessionUnderTest,
  type CompactionSettings,
  checkCompactionAcrossSessions,
} from "./session-token-stamps.js";
export { ROUND_TRIP_TEXTS, type RoundTripText } from "./texts.js";
