/**
 * A pipeline plugin's state: a JSON object it reads before a model call and changes after it (the `state`
 * of Microsoft Agent Framework's context providers). It must survive `JSON.stringify`: stores persist it as
 * JSON.
 */
export type RunState = Record<string, unknown>;

/** Every plugin's state of one session, by `sourceId`. */
export type RunStates = Record<string, RunState>;

/**
 * Where a pipeline persists plugin state, per session. `load` resolves to `null` for a session never saved.
 * `save` gets every plugin's state of the session at once, after a call succeeded, so a store that writes
 * it in one batch never holds half a call. `delete` forgets a session's state (when the session is deleted).
 */
export interface RunStateStore {
  load(sessionId: string): Promise<RunStates | null>;
  save(sessionId: string, states: RunStates): Promise<void>;
  delete(sessionId: string): Promise<void>;
}
