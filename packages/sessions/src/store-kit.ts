/**
 * `@contextblocks/sessions/store-kit`: what authors of session stores and backends build on (the
 * `SessionStoreV1` contract, `MessageTree` over it, argument checks, stored-message parsing, overlays) and
 * the internals our adapters and the agents drop-in import. Applications import the main entry.
 */
export { alignBackward, alignForward, tailStart, unsafeCuts } from "./compaction/boundaries.js";
export { buildSummaryPrompt, summarySections } from "./compaction/prompt.js";
export {
  type HistoryBatchOptions,
  type HistoryOptions,
  type HistoryResult,
  messageBytes,
  readPathNodes,
} from "./history-read.js";
export {
  checkMessageId,
  checkSessionMessage,
  maximumMessageIdLength,
  serverOnlyPartTypes,
  untrustedMessage,
} from "./message.js";
export { messageKeyOf } from "./message-key.js";
export {
  messageTokenStamp,
  type PathTokenRow,
  pathTokensWithOverlays,
  storedTokenStamp,
  tokensPerMessage,
} from "./message-tokens.js";
export { type AppendChainOptions, MessageTree } from "./message-tree.js";
export { applyCompactions, compactionPrefix, sameOverlay } from "./overlays.js";
export type { RunState, RunStateStore, RunStates } from "./run-state.js";
export {
  candidateCount,
  contextTokens,
  type HitSelection,
  neighbourShare,
  type SearchCandidate,
  selectSearchHits,
  weakShare,
} from "./search-hits.js";
export { defaultSearchRanking, type SearchRanking, searchRankingOf } from "./search-ranking.js";
export {
  type CandidateReranking,
  defaultCandidateReranking,
  rerankSearchCandidates,
} from "./search-rerank.js";
export type {
  CompactionAddedEvent,
  ImportOptions,
  MessageAppendedEvent,
  MessagesClearedEvent,
  MessagesDeletedEvent,
  MessageUpdatedEvent,
  SessionMessageEvent,
  UpsertOptions,
} from "./session.js";
export { isSessionBackend } from "./session-backend.js";
export type { SessionContextOptions } from "./session-builder.js";
export {
  continuationPreamble,
  formatSearchResults,
  type SessionCreatedEvent,
  type SessionDeletedEvent,
} from "./session-manager.js";
export type {
  CreateSessionOptions,
  ListSessionsOptions,
  SessionChanges,
  SessionRegistry,
  SynchronousSessionRegistry,
} from "./session-registry.js";
export {
  type AppendedMessage,
  isSessionStore,
  type PathMessagesResult,
  type RecentHistoryResult,
  type SessionStore,
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
  checkListLimit,
  checkRecentHistoryBudget,
  checkRunStateSessionId,
  checkSearchLimit,
  checkSessionText,
  checkUsageArguments,
  maximumListLimit,
  maximumSearchLimit,
  maximumSessionTextLength,
  runStateRows,
} from "./store-arguments.js";
export { type AppendAttempt, isIdenticalRetry, type StoredIdHolder, storedIdError } from "./stored-id.js";
export {
  checkWholePath,
  maximumPathLength,
  orderPath,
  parseStoredMessage,
  parseStoredMessages,
  serializeMessage,
} from "./stored-message.js";
