import type { WritableContextProvider } from "@contextblocks/core";
import type { AnyContextProvider } from "@contextblocks/core/store-kit";
import type { RunStateStore } from "./run-state.js";
import type { SessionRegistry } from "./session-registry.js";
import type { SearchResult, SessionStore } from "./session-store.js";

/**
 * Everything sessions keep, in one database: what a backend package hands to `new SessionBuilder(backend)`
 * and `new SessionManager(backend)` (`sqliteBackend(ctx.storage)` from `@contextblocks/sqlite`,
 * `postgresBackend(pool)` from `@contextblocks/postgres`, `inMemoryBackend()` from
 * `@contextblocks/sessions/memory`). Like a kysely dialect: the session layer above never knows the store.
 * Each part creates only its own tables, on first use.
 */
export interface SessionBackend {
  /** A short name for errors and inspectors: `"sqlite"`, `"postgres"`, `"memory"`. */
  readonly name: string;
  /** The message tree of one session (`""`: the default session). */
  messages(sessionId: string): SessionStore;
  /** Storage for a block declared without a provider, kept apart per session. */
  block(label: string, sessionId: string): AnyContextProvider;
  /** Where the session's frozen prompt persists (`withCachedPrompt()`). */
  prompt(sessionId: string): WritableContextProvider;
  /** Pipeline plugin state, per session. */
  readonly runState: RunStateStore;
  /** The named sessions of this database. */
  readonly registry: SessionRegistry;
  /** Search over every session's messages; each hit names its `sessionId`. */
  searchMessages(query: string, limit: number): Promise<SearchResult[]>;
  /**
   * `searchMessages`, answered at once, where the backend's storage answers synchronously (memory; SQLite on a
   * Durable Object or better-sqlite3); absent elsewhere (Postgres). The same hits and the same refusals.
   */
  readonly searchMessagesSync?: ((query: string, limit: number) => SearchResult[]) | undefined;
  /**
   * Removes everything the session owned: messages, overlays, search rows, the blocks stored for it, its
   * frozen prompt, its run state and its registry row. Afterwards none of its text is in any table.
   */
  deleteSession(sessionId: string): Promise<void>;
}

/** True for an object with the parts of a `SessionBackend` (what `SessionBuilder` needs of it). */
export function isSessionBackend(value: unknown): value is SessionBackend {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.messages === "function" &&
    typeof candidate.block === "function" &&
    typeof candidate.prompt === "function" &&
    typeof candidate.deleteSession === "function"
  );
}
