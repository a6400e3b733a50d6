import type { RunStateStore, RunStates } from "../run-state.js";

/**
 * A `RunStateStore` in a `Map`, kept as JSON text: what is saved is a copy (later changes to the objects do
 * not leak in) and anything that would not survive a real store (a function, a cycle) fails at `save`.
 * Share one instance between pipelines to model a restart.
 */
export class InMemoryRunStateStore implements RunStateStore {
  readonly #sessions = new Map<string, string>();

  async load(sessionId: string): Promise<RunStates | null> {
    const json = this.#sessions.get(sessionId);
    return json === undefined ? null : (JSON.parse(json) as RunStates);
  }

  async save(sessionId: string, states: RunStates): Promise<void> {
    this.#sessions.set(sessionId, JSON.stringify(states));
  }

  async delete(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
  }
}
