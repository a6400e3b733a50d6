/**
 * Drop-in names for code written against Cloudflare agents' Sessions API (agents@0.22.0,
 * `agents/experimental/memory/session`): change the import to `@contextblocks/agents/experimental/memory/session`.
 * The migration guide in the repository README lists every difference with its one-line fix.
 */

export type {
  ContextBlock,
  ContextConfig,
  ContextProvider,
  SearchProvider,
  SkillProvider,
  WritableContextProvider,
} from "@contextblocks/core";
export {
  type AnyContextProvider,
  isSearchProvider,
  isSkillProvider,
  isWritableProvider,
} from "@contextblocks/core/store-kit";
/** The names `agents/context` uses; the same classes. */
export { Fts5SearchProvider as AgentSearchProvider } from "@contextblocks/fts5";
export type {
  SearchResult,
  SessionMessage,
  SessionMessagePart,
  StoredCompaction,
} from "@contextblocks/sessions";
export type { CompactFunction, CompactResult } from "@contextblocks/sessions/compaction";
export type { SessionStore as SessionProvider } from "@contextblocks/sessions/store-kit";
export { SqliteContextProvider as AgentContextProvider } from "@contextblocks/sqlite";
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
export { R2SkillProvider } from "./r2-skill-provider.js";
export { NO_COMPACTION_MESSAGE, Session } from "./session.js";
export { SessionManager } from "./session-manager.js";
export { agentsTools, type UnloadCallback } from "./tools.js";
