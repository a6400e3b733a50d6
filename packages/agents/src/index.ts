/**
 * Drop-in names for code written against Cloudflare agents' Sessions API (agents@0.22.0,
 * `agents/experimental/memory/session`): change the import to `@contextblocks/agents/experimental/memory/session`.
 * The migration guide in the repository README lists every difference with its one-line fix.
 */
export {
  type AnyContextProvider,
  type ContextBlock,
  type ContextConfig,
  type ContextProvider,
  isSearchProvider,
  isSkillProvider,
  isWritableProvider,
  type SearchProvider,
  type SkillProvider,
  type WritableContextProvider,
} from "@contextblocks/core";
export { AgentSearchProvider } from "@contextblocks/fts5";
export { R2SkillProvider } from "@contextblocks/r2";
export type {
  CompactFunction,
  CompactResult,
  SearchResult,
  SessionMessage,
  SessionMessagePart,
  SessionStore as SessionProvider,
  StoredCompaction,
} from "@contextblocks/sessions";
export { AgentContextProvider } from "@contextblocks/sqlite";
export { AgentSessionProvider } from "./agent-session-provider.js";
export {
  type AgentsSessionsCompaction,
  type AgentsSessionsMessage,
  importAgentsSessions,
  type ReadAgentsSessionsOptions,
  readAgentsSessions,
} from "./agents-sessions.js";
export { agentsBlockKey, agentsPromptKey, agentsSqliteBackend, type SessionSource } from "./backend.js";
export { ContextBlocks } from "./context-blocks.js";
export {
  type PgClientLike,
  type PostgresClient,
  type PostgresConnection,
  PostgresContextProvider,
  PostgresSearchProvider,
  PostgresSessionProvider,
} from "./postgres.js";
export { NO_COMPACTION_MESSAGE, Session } from "./session.js";
export { SessionManager } from "./session-manager.js";
export { agentsTools, type UnloadCallback } from "./tools.js";
