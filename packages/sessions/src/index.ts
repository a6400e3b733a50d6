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
  checkSessionMessage,
  maximumMessageIdLength,
  type SessionMessage,
  type SessionMessagePart,
  textOfMessage,
} from "./message.js";
export { applyCompactions, compactionPrefix, isCompactionMessage } from "./overlays.js";
export { runMessagesOf, verbatimPartType } from "./run-message-decoding.js";
export type { RunState, RunStateStore, RunStates } from "./run-state.js";
export { compactionsTable, ensureSchema, leavesTable, messagesTable, searchTable } from "./schema.js";
export {
  Session,
  type SessionContextBlock,
  type SessionContextOptions,
  type SessionOptions,
} from "./session.js";
export type { SessionBackend } from "./session-backend.js";
export {
  type SessionHistoryOptions,
  SessionHistoryProvider,
  type SessionSource,
} from "./session-history-provider.js";
export type { SessionHost } from "./session-host.js";
export {
  type CreateSessionOptions,
  continuationPreamble,
  type SessionInfo,
  SessionManager,
} from "./session-manager.js";
export {
  isSessionProvider,
  type RecentHistoryResult,
  type SearchResult,
  type SessionProvider,
  type StoredCompaction,
} from "./session-provider.js";
export type { SessionChanges, SessionRegistry } from "./session-registry.js";
export { runStateTable, SessionRunStateStore } from "./session-run-state-store.js";
export { isSessionStore, type MessageNode, type SessionStore } from "./session-store.js";
export {
  SqliteSessionProvider,
  /** The name `agents/experimental/memory/session` uses; the same class. */
  SqliteSessionProvider as AgentSessionProvider,
  type SqliteSessionProviderOptions,
} from "./sqlite-session-provider.js";
export {
  maximumPathLength,
  orderPath,
  parseStoredMessage,
  parseStoredMessages,
  serializeMessage,
} from "./stored-message.js";
