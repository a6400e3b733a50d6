export type {
  CompactAfterOptions,
  CompactContext,
  CompactFunction,
  CompactionErrorHandler,
  CompactResult,
  SessionTokenCounter,
  SessionTokenCounterInput,
} from "./compaction/types.js";
export {
  type HistoryBatchOptions,
  type HistoryOptions,
  type HistoryResult,
  messageBytes,
  readPathNodes,
} from "./history-read.js";
export {
  type AppendOptions,
  checkMessageId,
  checkSessionMessage,
  maximumMessageIdLength,
  type SessionMessage,
  type SessionMessagePart,
  serverOnlyPartTypes,
  textOfMessage,
  untrustedMessage,
} from "./message.js";
export {
  estimateMessageTokens,
  messageTokenStamp,
  type PathTokenRow,
  pathTokensWithOverlays,
  storedTokenStamp,
  tokensPerMessage,
} from "./message-tokens.js";
export { type AppendChainOptions, MessageTree } from "./message-tree.js";
export { applyCompactions, compactionPrefix, isCompactionMessage, sameOverlay } from "./overlays.js";
export type { RunState, RunStateStore, RunStates } from "./run-state.js";
export {
  type CompactedEvent,
  type CompactionAddedEvent,
  type ImportOptions,
  isSessionMessageEvent,
  type MessageAppendedEvent,
  type MessagesClearedEvent,
  type MessagesDeletedEvent,
  type MessageUpdatedEvent,
  Session,
  type SessionBackendOptions,
  type SessionContextBlock,
  type SessionContextOptions,
  type SessionEvent,
  type SessionListener,
  type SessionMessageEvent,
  type SessionOptions,
  type UpsertOptions,
  type UsageReportedEvent,
} from "./session.js";
export { isSessionBackend, type SessionBackend } from "./session-backend.js";
export {
  continuationPreamble,
  formatSearchResults,
  type SessionCreatedEvent,
  type SessionDeletedEvent,
  SessionManager,
  type SessionManagerEvent,
  type SessionManagerListener,
} from "./session-manager.js";
export type {
  CreateSessionOptions,
  SessionChanges,
  SessionInfo,
  SessionRegistry,
} from "./session-registry.js";
export {
  type AppendedMessage,
  isSessionStore,
  type MessageNode,
  type PathMessagesResult,
  type RecentHistoryResult,
  type SearchResult,
  type SessionStore,
  type StoredCompaction,
} from "./session-store.js";
export {
  type AppendPlacement,
  type AppendResult,
  type IdHolder,
  isSessionStoreV1,
  type MessageRecord,
  type PathTotals,
  type SessionStoreV1,
  type StoredSearchHit,
} from "./session-store-v1.js";
export {
  checkCalibration,
  checkCompactionArguments,
  checkRecentHistoryBudget,
  checkUsageArguments,
} from "./store-arguments.js";
export {
  type AppendAttempt,
  isIdenticalRetry,
  type StoredIdHolder,
  storedIdError,
} from "./stored-id.js";
export {
  checkWholePath,
  maximumPathLength,
  orderPath,
  parseStoredMessage,
  parseStoredMessages,
  serializeMessage,
} from "./stored-message.js";
