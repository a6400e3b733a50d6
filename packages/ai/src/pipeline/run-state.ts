/**
 * A provider's state: a JSON object it reads in `beforeRun` and changes in `afterRun` (the seed's `state`
 * dict). It must survive `JSON.stringify`: stores persist it as JSON.
 */
export type RunState = Record<string, unknown>;

/** Every provider's state of one session, by `sourceId`. */
export type RunStates = Record<string, RunState>;

/**
 * Where the pipeline persists provider state, per session. `load` resolves to `null` for a session never
 * saved. `save` gets every provider's state of the session at once, after a run succeeded, so a store that
 * writes it in one statement never holds half a run. Implementations: `InMemoryRunStateStore` here; a
 * Durable Object or SQL table is a few lines (one row per session, the JSON of `states`).
 */
export interface RunStateStore {
  load(sessionId: string): Promise<RunStates | null>;
  save(sessionId: string, states: RunStates): Promise<void>;
}

/**
 * A `RunStateStore` in a `Map`, kept as JSON text: what is saved is a copy (later changes to the objects do
 * not leak in) and anything that would not survive a real store (a function, a cycle) fails at `save`.
 * Share one instance between pipelines to model a restart.
 */
export class InMemoryRunStateStore implements RunStateStore {
  private readonly sessions = new Map<string, string>();

  async load(sessionId: string): Promise<RunStates | null> {
    const json = this.sessions.get(sessionId);
    return json === undefined ? null : (JSON.parse(json) as RunStates);
  }

  async save(sessionId: string, states: RunStates): Promise<void> {
    this.sessions.set(sessionId, JSON.stringify(states));
  }
}
