/** A row of the session registry, with the column names Cloudflare agents' `assistant_sessions` uses. */
export interface SessionInfo {
  id: string;
  name: string;
  parent_session_id: string | null;
  model: string | null;
  source: string | null;
  input_tokens: number;
  output_tokens: number;
  estimated_cost: number;
  end_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** What a new registry row holds besides its id and name. */
export interface CreateSessionOptions {
  parentSessionId?: string;
  model?: string;
  source?: string;
}

/** The fields `SessionRegistry.update` may change. */
export interface SessionChanges {
  name?: string;
  endReason?: string | null;
}

/** What `SessionRegistry.list` and `SessionManager.list` accept. */
export interface ListSessionsOptions {
  /**
   * At most this many sessions, the most recently updated (a whole number from 1 to 1,000). Without it,
   * every session. A SQL registry reads only those rows where an index serves the order.
   */
  limit?: number;
}

/**
 * The list of named sessions in one database (`SessionManager` uses it): one row per session. Implemented
 * by each backend over the same `assistant_sessions` table agents uses. Every write moves `updated_at`.
 */
export interface SessionRegistry {
  /** Adds a row; refuses an id that exists. */
  create(id: string, name: string, options?: CreateSessionOptions): Promise<SessionInfo>;
  get(id: string): Promise<SessionInfo | null>;
  /** Every session (or the first `limit`), most recently updated first. */
  list(options?: ListSessionsOptions): Promise<SessionInfo[]>;
  /** Changes the name or end reason; `NOT_FOUND` for an unknown id. */
  update(id: string, changes: SessionChanges): Promise<void>;
  /** Moves `updated_at` (after a message was stored). Unknown ids are ignored. */
  touch(id: string): Promise<void>;
  /** Adds to the usage counters (finite numbers only). */
  addUsage(id: string, inputTokens: number, outputTokens: number, cost: number): Promise<void>;
  /** Removes the row (only the row: `SessionBackend.deleteSession` removes what the session owned). */
  delete(id: string): Promise<void>;
  /**
   * The same registry answering at once, where its storage does (memory; SQLite on a Durable Object or
   * better-sqlite3); absent elsewhere (Postgres). Cloudflare agents' `SessionManager` registers sessions
   * synchronously: the compatibility manager of `@contextblocks/agents` needs this to do the same.
   */
  readonly synchronous?: SynchronousSessionRegistry | undefined;
}

/** `SessionRegistry`'s reads and writes, run synchronously: the same rows and the same refusals. */
export interface SynchronousSessionRegistry {
  create(id: string, name: string, options?: CreateSessionOptions): SessionInfo;
  get(id: string): SessionInfo | null;
  list(options?: ListSessionsOptions): SessionInfo[];
  update(id: string, changes: SessionChanges): void;
  addUsage(id: string, inputTokens: number, outputTokens: number, cost: number): void;
}
