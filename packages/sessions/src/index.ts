// What applications use. Compaction is in `./compaction`, in-memory stores in `./memory`, and helpers
// for authors of session stores in `./store-kit`.
export {
  type AppendOptions,
  type SessionMessage,
  type SessionMessagePart,
  textOfMessage,
} from "./message.js";
export { estimateMessageTokens } from "./message-tokens.js";
export { isCompactionMessage } from "./overlays.js";
export {
  type CompactedEvent,
  isSessionMessageEvent,
  Session,
  type SessionEvent,
  type SessionListener,
} from "./session.js";
export type { SessionBackend } from "./session-backend.js";
export { SessionBuilder, type SessionOptions } from "./session-builder.js";
export {
  SessionManager,
  type SessionManagerEvent,
  type SessionManagerListener,
  type SynchronousSessionManager,
} from "./session-manager.js";
export type { ListSessionsOptions, SessionInfo } from "./session-registry.js";
export type { MessageNode, SearchContextTurn, SearchResult, StoredCompaction } from "./session-store.js";
