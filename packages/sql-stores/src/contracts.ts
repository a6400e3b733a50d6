/**
 * The shapes of `@contextblocks/sessions`' `RunStateStore` and `SessionRegistry` contracts that the stores
 * here implement, declared structurally. While `@contextblocks/sessions` still depends on
 * `@contextblocks/sqlite` (which stands on this package), importing it here would close a cycle; once
 * sessions is storage-free these become imports from it. The backends' classes declare
 * `implements RunStateStore` / `implements SessionRegistry` against sessions, which checks the shapes agree.
 */

/** Every pipeline plugin's state of one session, by source id (sessions' `RunStates`). */
export type RunStates = Record<string, Record<string, unknown>>;

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

/** The fields `update` may change. */
export interface SessionChanges {
  name?: string;
  endReason?: string | null;
}
